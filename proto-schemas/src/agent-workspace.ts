import { Type } from 'typebox';
import { Errors, IsoDate, Nullable, Uuid } from './common.ts';
import { route } from './route.ts';

// ── Logs (issue 19: what the agent prints) ──────────────────────────────────────────────────────
export const LogStream = Type.Union([Type.Literal('stdout'), Type.Literal('stderr')]);
/** One line the agent's gateway printed, with the engine's timestamp; secrets already redacted. */
export const LogLine = Type.Object({ time: IsoDate, stream: LogStream, text: Type.String() });
export const LogAgentParams = Type.Object({ agentId: Uuid });
export const LogHistoryQuery = Type.Object(
  {
    lines: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 200 })),
  },
  { additionalProperties: false },
);
export const LogHistory = Type.Object({ agentId: Uuid, lines: Type.Array(LogLine) });
/**
 * The body of `GET /api/logs/:agentId/stream`: Server-Sent Events, `event: line` with a LogLine as
 * `data` for each new line, `: keep-alive` comments every 15 s, until the client leaves.
 */
export const LogLineEvent = LogLine;
const EventStreamBody = (description: string) => Type.String({ description, contentMediaType: 'text/event-stream' });

// ── Files of the agent's workspace ──────────────────────────────────────────────────────────────
/** A path inside the agent's workspace, relative to it (`uploads/report.pdf`); `..` and absolute paths are 400. */
const WorkspacePath = Type.String({ minLength: 1, maxLength: 1024 });
export const FilesQuery = Type.Object(
  {
    agentId: Uuid,
    path: Type.Optional(WorkspacePath),
    /** `1`: answer the file itself (an `application/octet-stream` attachment) instead of listing a folder. */
    download: Type.Optional(
      Type.Union([Type.Literal('1'), Type.Literal('0'), Type.Literal('true'), Type.Literal('false')]),
    ),
  },
  { additionalProperties: false },
);
export const FilePathQuery = Type.Object({ agentId: Uuid, path: WorkspacePath }, { additionalProperties: false });
export const WorkspaceEntry = Type.Object({
  name: Type.String(),
  path: Type.String(),
  type: Type.Union([Type.Literal('file'), Type.Literal('directory')]),
  size: Type.Integer({ minimum: 0 }),
  updatedAt: IsoDate,
});
export const FileListing = Type.Object({
  agentId: Uuid,
  path: Type.String(),
  entries: Type.Array(WorkspaceEntry),
  /** Set when the folder holds more entries than one listing shows (10,000). */
  truncated: Type.Optional(Type.Boolean()),
});
export const FileUploaded = Type.Object({
  agentId: Uuid,
  path: Type.String(),
  size: Type.Integer({ minimum: 0 }),
  /** What the workspace holds now, and the plan's total. */
  usedBytes: Type.Integer({ minimum: 0 }),
  limitBytes: Type.Integer({ minimum: 0 }),
});

const MB = 1024 ** 2;
/**
 * Files a user puts in an agent's workspace, per plan (ours: nothing else sets them): bytes per file
 * and in total, well inside the plan's state disk (2 GB for solo), which the agent's memory shares.
 * Here, not in the agents service, because the edge's ceiling on uploads is the largest of them.
 */
const WORKSPACE_LIMITS: Record<string, { fileBytes: number; totalBytes: number }> = {
  free: { fileBytes: 10 * MB, totalBytes: 100 * MB },
  solo: { fileBytes: 25 * MB, totalBytes: 250 * MB },
  collective: { fileBytes: 50 * MB, totalBytes: 1024 * MB },
  label: { fileBytes: 100 * MB, totalBytes: 2048 * MB },
  network: { fileBytes: 250 * MB, totalBytes: 4096 * MB },
};
/** A plan's workspace limits; free and unknown plans get the smallest. */
export const workspaceLimitsOf = (plan: string) => WORKSPACE_LIMITS[plan] ?? WORKSPACE_LIMITS.free!;
/** The largest file any plan may upload: the edge refuses an upload past it before the service sees more. */
export const LARGEST_UPLOAD_BYTES = Math.max(...Object.values(WORKSPACE_LIMITS).map((limits) => limits.fileBytes));
export const FileDeleted = Type.Object({ deleted: Type.Literal(true), agentId: Uuid, path: Type.String() });

// ── Metrics ─────────────────────────────────────────────────────────────────────────────────────
export const MetricsRange = Type.Union([
  Type.Literal('1h'),
  Type.Literal('24h'),
  Type.Literal('7d'),
  Type.Literal('30d'),
]);
export const MetricsQuery = Type.Object(
  { agentId: Uuid, range: Type.Optional(MetricsRange) },
  { additionalProperties: false },
);
/** One bucket of the range; null where nothing was measured or used in it. */
export const MetricsPoint = Type.Object({
  time: IsoDate,
  cpuPercent: Nullable(Type.Number()),
  memoryBytes: Nullable(Type.Number()),
  messages: Nullable(Type.Integer()),
  tokens: Nullable(Type.Integer()),
  costUsd: Nullable(Type.Number()),
  /** Of `messages`, the AI calls every provider attempt failed. */
  errors: Nullable(Type.Integer()),
});
export const MetricsSummary = Type.Object({
  /** Share of the range's samples in which the agent's container was running; null without samples. */
  uptimePercent: Nullable(Type.Number()),
  /** Latency of the agent's model calls through the AI gateway; null without calls. */
  p50LatencyMs: Nullable(Type.Number()),
  p95LatencyMs: Nullable(Type.Number()),
  messages: Type.Integer({ minimum: 0 }),
  costUsd: Type.Number({ minimum: 0 }),
});
export const AgentMetrics = Type.Object({
  agentId: Uuid,
  range: MetricsRange,
  points: Type.Array(MetricsPoint),
  summary: MetricsSummary,
});

// ── Status events ───────────────────────────────────────────────────────────────────────────────
/**
 * One `event: agent-status` of `GET /api/events` (its `data`): an agent of the caller changed
 * status (`deleted` when it is gone). Written by whatever changed it (provisioning, lifecycle,
 * reconciler), published by the database on commit.
 */
export const AgentStatusEvent = Type.Object({
  agentId: Uuid,
  status: Type.String(),
  previousStatus: Nullable(Type.String()),
  at: IsoDate,
  /** Set when a web lifecycle operation (POST /api/agents/:id/<action>) ended: what it was, how it went, and why it failed in words. */
  action: Type.Optional(Type.String()),
  outcome: Type.Optional(Type.Union([Type.Literal('done'), Type.Literal('failed')])),
  error: Type.Optional(Type.String()),
});

export const agentWorkspaceRoutes = {
  logHistory: route({
    method: 'GET',
    url: '/api/logs/:agentId/history',
    service: 'agents',
    surfaces: ['web'],
    auth: 'user',
    rateLimit: 'web-agent-workspace',
    summary: "The agent's last `lines` (default 200, at most 1000) lines of output, oldest first, secrets redacted",
    schema: { params: LogAgentParams, querystring: LogHistoryQuery, response: { 200: LogHistory, ...Errors } },
  }),
  logStream: route({
    method: 'GET',
    url: '/api/logs/:agentId/stream',
    service: 'agents',
    surfaces: ['web'],
    auth: 'user',
    longLived: true,
    summary:
      "New lines of the agent's output as Server-Sent Events (`event: line`, data a LogLine), keep-alive every 15 s, secrets redacted",
    schema: {
      params: LogAgentParams,
      response: { 200: EventStreamBody('`event: line` per new line (data: LogLine)'), ...Errors },
    },
  }),
  listFiles: route({
    method: 'GET',
    url: '/api/files',
    service: 'agents',
    surfaces: ['web'],
    auth: 'user',
    rateLimit: 'web-files',
    summary:
      "A folder of the agent's workspace (`uploads/` by default), or with `download=1` one file as an attachment",
    schema: { querystring: FilesQuery, response: { 200: FileListing, ...Errors } },
  }),
  uploadFile: route({
    method: 'POST',
    url: '/api/files',
    service: 'agents',
    surfaces: ['web'],
    auth: 'user',
    rateLimit: 'web-files',
    streamedBody: { maxBytes: LARGEST_UPLOAD_BYTES },
    summary:
      "Write the request body (raw bytes, streamed) to `path` in the agent's workspace; 413 over the plan's size per file, 429 over its total",
    schema: { querystring: FilePathQuery, response: { 201: FileUploaded, ...Errors } },
  }),
  deleteFile: route({
    method: 'DELETE',
    url: '/api/files',
    service: 'agents',
    surfaces: ['web'],
    auth: 'user',
    rateLimit: 'web-files',
    summary: "Delete one file (or an empty folder) of the agent's workspace",
    schema: { querystring: FilePathQuery, response: { 200: FileDeleted, ...Errors } },
  }),
  metrics: route({
    method: 'GET',
    url: '/api/metrics',
    service: 'agents',
    surfaces: ['web'],
    auth: 'user',
    rateLimit: 'web-agent-workspace',
    summary:
      "The agent's CPU, memory, messages, tokens, cost and errors over `range` (default 24h), with uptime and latency",
    schema: { querystring: MetricsQuery, response: { 200: AgentMetrics, ...Errors } },
  }),
  events: route({
    method: 'GET',
    url: '/api/events',
    service: 'agents',
    surfaces: ['web'],
    auth: 'user',
    longLived: true,
    summary:
      "The caller's agents' status changes as Server-Sent Events (`event: agent-status`, data an AgentStatusEvent), keep-alive every 15 s",
    schema: {
      response: { 200: EventStreamBody('`event: agent-status` per change (data: AgentStatusEvent)'), ...Errors },
    },
  }),
};
