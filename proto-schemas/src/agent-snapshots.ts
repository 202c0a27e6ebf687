import { Type } from 'typebox';
import { ErrorBody, Errors, IsoDate, Nullable, Uuid } from './common.ts';
import { ProvisionedAgent } from './agents.ts';
import { workspaceLimitsOf } from './agent-workspace.ts';
import { route, type RouteSpec } from './route.ts';

// ── Snapshots of an agent (issue 30): its state disk, applied config, skills and channel bindings ──
export const SnapshotReason = Type.Union([
  Type.Literal('manual'),
  Type.Literal('scheduled'),
  Type.Literal('before-update'),
  Type.Literal('before-repair'),
  Type.Literal('before-reset'),
  Type.Literal('before-restore'),
  Type.Literal('import'),
]);
export const SnapshotStatus = Type.Union([Type.Literal('pending'), Type.Literal('ready'), Type.Literal('failed')]);
export const SnapshotAgentParams = Type.Object({ id: Uuid });
export const SnapshotParams = Type.Object({ id: Uuid, snapshotId: Uuid });
export const TakeSnapshotBody = Type.Object(
  { label: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })) },
  { additionalProperties: false },
);
export const Snapshot = Type.Object({
  id: Uuid,
  label: Nullable(Type.String()),
  reason: SnapshotReason,
  /** Bytes of the compressed archive; null until it is taken. */
  sizeBytes: Nullable(Type.Integer({ minimum: 0 })),
  /** SHA-256 of the archive as stored (hex); null until it is taken. */
  sha256: Nullable(Type.String()),
  openclawVersion: Nullable(Type.String()),
  createdAt: IsoDate,
  status: SnapshotStatus,
});
const GB = 1024 ** 3;
/**
 * Snapshots per plan (ours: nothing else sets them): how many daily scheduled snapshots of each agent
 * are kept (the newest), and the bytes all of an owner's snapshot archives may take together.
 */
const SNAPSHOT_LIMITS: Record<string, { scheduledKept: number; quotaBytes: number }> = {
  free: { scheduledKept: 0, quotaBytes: 1 * GB },
  solo: { scheduledKept: 3, quotaBytes: 2 * GB },
  collective: { scheduledKept: 7, quotaBytes: 10 * GB },
  label: { scheduledKept: 14, quotaBytes: 40 * GB },
  network: { scheduledKept: 30, quotaBytes: 200 * GB },
};
/** A plan's snapshot limits; free and unknown plans get the smallest. */
export const snapshotLimitsOf = (plan: string) => SNAPSHOT_LIMITS[plan] ?? SNAPSHOT_LIMITS.free!;
export const SnapshotQuota = Type.Object({
  /** Bytes of every ready snapshot archive of the owner's agents. */
  usedBytes: Type.Integer({ minimum: 0 }),
  /** What the agent's plan allows them together; a snapshot is refused (429) once they are reached. */
  quotaBytes: Type.Integer({ minimum: 0 }),
  /** Daily scheduled snapshots of this agent kept (the newest); 0: the plan takes none. */
  scheduledKept: Type.Integer({ minimum: 0 }),
});
export const SnapshotTaken = Type.Object({ snapshot: Type.Object({ id: Uuid, status: Type.Literal('pending') }) });
export const SnapshotList = Type.Object({ snapshots: Type.Array(Snapshot), quota: SnapshotQuota });
export const SnapshotDeleted = Type.Object({ deleted: Type.Literal(true), id: Uuid });
export const RestoreBody = Type.Object({ snapshotId: Uuid }, { additionalProperties: false });
export const Restored = Type.Object({
  success: Type.Literal(true),
  id: Uuid,
  snapshotId: Uuid,
  /** The snapshot of the state the restore replaced. */
  beforeRestoreSnapshotId: Uuid,
  status: Type.String(),
});
export const CloneBody = Type.Object(
  {
    /** A ready snapshot of the agent; absent: one is taken of its state now. */
    snapshotId: Type.Optional(Uuid),
    name: Type.String({ minLength: 1, maxLength: 64 }),
  },
  { additionalProperties: false },
);
export const Cloned = Type.Object({ success: Type.Literal(true), agent: ProvisionedAgent, snapshotId: Uuid });
export const SnapshotImported = Type.Object({ snapshot: Snapshot });
/** The largest archive an import takes (the largest plan's; each plan's is its workspace total, workspaceLimitsOf). */
export const LARGEST_IMPORT_BYTES = workspaceLimitsOf('network').totalBytes;
/** The snapshot archive itself: a gzipped tar (`manifest.json`, `state/…`, `checksums.json`). */
const SnapshotArchive = Type.String({
  description: 'A gzipped tar: manifest.json, state/…, checksums.json',
  contentMediaType: 'application/gzip',
});

/** Every snapshot route: the owner's, on the web (session or user key) and the backend (API key with x-user-id). */
const owners = {
  service: 'agents',
  surfaces: ['web', 'backend'],
  auth: 'user-or-service',
  rateLimit: 'web-gateway',
} satisfies Partial<RouteSpec>;

export const agentSnapshotRoutes = {
  takeSnapshot: route({
    ...owners,
    method: 'POST',
    url: '/api/agents/:id/snapshots',
    summary:
      "Take a snapshot of the agent (its state disk, applied config, skills and channel bindings; no secret): 202, taken by the worker; 429 once the owner's snapshots fill the plan's quota",
    schema: {
      params: SnapshotAgentParams,
      body: Type.Optional(TakeSnapshotBody),
      response: { 202: SnapshotTaken, ...Errors },
    },
  }),
  listSnapshots: route({
    ...owners,
    method: 'GET',
    url: '/api/agents/:id/snapshots',
    summary: "The agent's snapshots, newest first, and the plan's snapshot quota",
    schema: { params: SnapshotAgentParams, response: { 200: SnapshotList, ...Errors } },
  }),
  deleteSnapshot: route({
    ...owners,
    method: 'DELETE',
    url: '/api/agents/:id/snapshots/:snapshotId',
    summary: 'Delete one snapshot and its archive',
    schema: { params: SnapshotParams, response: { 200: SnapshotDeleted, ...Errors } },
  }),
  downloadSnapshot: route({
    ...owners,
    method: 'GET',
    url: '/api/agents/:id/snapshots/:snapshotId/download',
    summary: 'The snapshot archive (a gzipped tar, streamed as an attachment); 409 while it is not ready',
    schema: { params: SnapshotParams, response: { 200: SnapshotArchive, ...Errors } },
  }),
  restoreSnapshot: route({
    ...owners,
    method: 'POST',
    url: '/api/agents/:id/restore',
    summary: 'Bring the agent back to one of its snapshots (a snapshot of its current state is taken first)',
    schema: { params: SnapshotAgentParams, body: RestoreBody, response: { 200: Restored, ...Errors } },
  }),
  cloneAgent: route({
    method: 'POST',
    url: '/api/agents/:id/clone',
    service: 'agents',
    surfaces: ['web'],
    auth: 'user',
    rateLimit: 'web-gateway',
    summary:
      "A new agent of the same owner from one of this agent's snapshots (or one taken now): counts against the plan's agent limit, gets its own gateway token and keys, channels off until connected again",
    schema: { params: SnapshotAgentParams, body: CloneBody, response: { 201: Cloned, 402: ErrorBody, ...Errors } },
  }),
  importSnapshot: route({
    method: 'POST',
    url: '/api/agents/:id/import',
    service: 'agents',
    surfaces: ['web'],
    auth: 'user',
    rateLimit: 'web-gateway',
    streamedBody: { maxBytes: LARGEST_IMPORT_BYTES },
    summary:
      "Upload a snapshot archive made by download (the raw body, streamed): checked (manifest, every SHA-256, no absolute path, link or device) and kept as an `import` snapshot of this agent to restore; 413 over the plan's size (its workspace total)",
    schema: { params: SnapshotAgentParams, response: { 201: SnapshotImported, ...Errors } },
  }),
};
