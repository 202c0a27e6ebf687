/** Largest WebSocket frame relayed either way between a caller and an agent's gateway: larger is closed with 1009. */
export const RELAYED_FRAME_LIMIT_BYTES = 16 * 1024 * 1024;
/** A peer reading slower than the other side writes is cut off (1013) once this much waits in the service for it. */
export const RELAY_BACKLOG_LIMIT_BYTES = 16 * 1024 * 1024;
/** WebSocket close code: try again later (the peer fell too far behind). */
export const RELAY_BACKLOG_CLOSE = 1013;
