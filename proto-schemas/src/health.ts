import { Type } from 'typebox';

export const HealthLevel = Type.Union([Type.Literal('healthy'), Type.Literal('degraded'), Type.Literal('unhealthy')]);

/** `GET /api/health` on the web surface (answered by the edge itself). */
export const WebHealth = Type.Object({ status: Type.Literal('ok'), health: HealthLevel, timestamp: Type.String() });

/** `GET /health` on the backend surface (answered by the edge itself). */
export const BackendHealth = Type.Object({
  status: Type.Literal('ok'),
  timestamp: Type.String(),
  docker: Type.Union([Type.Literal('available'), Type.Literal('unavailable')]),
  provisioning: Type.Union([Type.Literal('enabled'), Type.Literal('disabled')]),
  provider: Type.String(),
  /** The edge's own dependencies as its readiness sees them: `ok`, or why not. */
  dependencies: Type.Record(Type.String(), Type.String()),
});
