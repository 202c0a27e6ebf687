import { Type } from 'typebox';
import { Errors, IsoDate, Nullable, Uuid } from './common.ts';
import { NextCursor, PageQueryFields } from './pagination.ts';
import { route } from './route.ts';

// ── Configuration and backups ──────────────────────────────────────────────────────────────────
/** An agent configuration: a JSON object whose keys OpenClaw must know (checked by the service). */
export const AgentConfig = Type.Object({}, { additionalProperties: true });
export const ConfigBackup = Type.Object({ id: Type.String(), timestamp: IsoDate });
export const ConfigView = Type.Object({ config: AgentConfig, backups: Type.Array(ConfigBackup) });
/** `config` may also arrive JSON-encoded as a string; the service decodes and checks it. */
export const ConfigSaveBody = Type.Object({ config: Type.Unknown() }, { additionalProperties: false });
export const ConfigSaved = Type.Object({
  success: Type.Literal(true),
  config: AgentConfig,
  backupId: Type.String(),
  backups: Type.Array(ConfigBackup),
});
export const ConfigRestoreBody = Type.Object(
  { backupId: Type.String({ minLength: 1, maxLength: 128 }) },
  { additionalProperties: false },
);
export const ConfigRestored = Type.Object({
  success: Type.Literal(true),
  config: AgentConfig,
  restoredFrom: Type.String(),
  backups: Type.Array(ConfigBackup),
});

// ── Devices ────────────────────────────────────────────────────────────────────────────────────
export const DeviceStatus = Type.Union([
  Type.Literal('pending'),
  Type.Literal('approved'),
  Type.Literal('denied'),
  Type.Literal('revoked'),
]);
export const Device = Type.Object({
  id: Type.String(),
  name: Type.String(),
  ip: Nullable(Type.String()),
  firstSeen: IsoDate,
  lastSeen: IsoDate,
  status: DeviceStatus,
});
export const DeviceLists = Type.Object({ pending: Type.Array(Device), approved: Type.Array(Device) });
/** One of the caller's agents whose devices to list (absent: every running agent's). */
export const DevicesQuery = Type.Object({ agentId: Type.Optional(Uuid) }, { additionalProperties: false });
export const AgentDevicesQuery = Type.Object({ agentId: Uuid }, { additionalProperties: false });
export const DeviceAction = Type.Union([Type.Literal('approve'), Type.Literal('deny'), Type.Literal('revoke')]);
export const DeviceActionBody = Type.Object(
  {
    deviceId: Type.String({ minLength: 1, maxLength: 128 }),
    action: DeviceAction,
  },
  { additionalProperties: false },
);
export const DeviceActionResult = Type.Object({
  success: Type.Literal(true),
  pending: Type.Array(Device),
  approved: Type.Array(Device),
});

// ── Workflows ──────────────────────────────────────────────────────────────────────────────────
export const WorkflowNodeType = Type.Union([
  Type.Literal('trigger'),
  Type.Literal('action'),
  Type.Literal('condition'),
  Type.Literal('output'),
]);
/** `config` and `position` are JSON-encoded strings on the wire; objects are accepted and encoded. */
const EncodedJson = Type.Union([Type.String({ maxLength: 65_536 }), Type.Object({}, { additionalProperties: true })]);
export const WorkflowNodeInput = Type.Object(
  {
    type: WorkflowNodeType,
    config: Type.Optional(EncodedJson),
    position: Type.Optional(EncodedJson),
  },
  { additionalProperties: false },
);
export const WorkflowNode = Type.Object({
  id: Uuid,
  type: WorkflowNodeType,
  config: Type.String(),
  position: Type.String(),
  createdAt: IsoDate,
});
export const Workflow = Type.Object({
  id: Uuid,
  name: Type.String(),
  description: Nullable(Type.String()),
  enabled: Type.Boolean(),
  createdAt: IsoDate,
  updatedAt: IsoDate,
  nodes: Type.Array(WorkflowNode),
});
const WorkflowName = Type.String({ maxLength: 200 });
const WorkflowDescription = Nullable(Type.String({ maxLength: 4000 }));
const WorkflowNodes = Type.Array(WorkflowNodeInput, { maxItems: 500 });
export const WorkflowCreateBody = Type.Object(
  {
    name: WorkflowName,
    description: Type.Optional(WorkflowDescription),
    nodes: Type.Optional(WorkflowNodes),
  },
  { additionalProperties: false },
);
export const WorkflowUpdateBody = Type.Object(
  {
    name: Type.Optional(WorkflowName),
    description: Type.Optional(WorkflowDescription),
    enabled: Type.Optional(Type.Boolean()),
    nodes: Type.Optional(WorkflowNodes),
  },
  { additionalProperties: false },
);
export const WorkflowParams = Type.Object({ workflowId: Uuid });
export const WorkflowListQuery = Type.Object(PageQueryFields);
export const WorkflowList = Type.Object({ workflows: Type.Array(Workflow), nextCursor: NextCursor });
export const WorkflowOne = Type.Object({ workflow: Workflow });
export const WorkflowDeleted = Type.Object({ deleted: Type.Literal(true) });

// ── Dashboard stats ────────────────────────────────────────────────────────────────────────────
const Count = Type.Integer({ minimum: 0 });
export const DashboardStats = Type.Object({
  agents: Type.Object({ active: Count, total: Count, limit: Count, newToday: Count }),
  skills: Type.Object({ installed: Count }),
  tasks: Type.Object({ total: Count }),
});

const INVALID_REQUEST_BODY = 'Invalid request body';
/** The 400s of a configuration save (the agents area's too). */
export const CONFIG_BAD_REQUEST = { missing: { config: 'Invalid config object' }, body: INVALID_REQUEST_BODY };

export const workspaceRoutes = {
  getConfig: route({
    method: 'GET',
    url: '/api/config',
    service: 'agents',
    surfaces: ['web'],
    auth: 'user',
    summary:
      "The user's defaults for new agents (or the plan's defaults) and the last 10 backups; an agent's own configuration is /api/agents/:id/config",
    schema: { response: { 200: ConfigView, ...Errors } },
  }),
  saveConfig: route({
    method: 'POST',
    url: '/api/config',
    service: 'agents',
    surfaces: ['web'],
    auth: 'user',
    badRequest: CONFIG_BAD_REQUEST,
    summary:
      'Save the defaults for new agents (merged into each agent provisioned afterwards, no existing agent changes); the previous ones are backed up first',
    schema: { body: ConfigSaveBody, response: { 200: ConfigSaved, ...Errors } },
  }),
  restoreConfig: route({
    method: 'PUT',
    url: '/api/config',
    service: 'agents',
    surfaces: ['web'],
    auth: 'user',
    badRequest: {
      missing: { backupId: 'Missing backupId' },
      invalid: { backupId: 'Missing backupId' },
      body: INVALID_REQUEST_BODY,
    },
    summary: 'Restore a backup of the defaults for new agents; the current ones are backed up first',
    schema: { body: ConfigRestoreBody, response: { 200: ConfigRestored, ...Errors } },
  }),
  listDevices: route({
    method: 'GET',
    url: '/api/devices',
    service: 'agents',
    surfaces: ['web'],
    auth: 'user',
    rateLimit: 'web-agent-workspace',
    summary:
      "Paired devices waiting for approval and approved ones; `agentId`: that agent's only (another user's agent: 404)",
    schema: { querystring: DevicesQuery, response: { 200: DeviceLists, ...Errors } },
  }),
  openclawDevices: route({
    method: 'GET',
    url: '/api/openclaw/devices',
    service: 'agents',
    surfaces: ['web'],
    auth: 'user',
    rateLimit: 'web-agent-workspace',
    summary: "The chosen agent's paired devices: the same as `GET /api/devices?agentId=`",
    schema: { querystring: AgentDevicesQuery, response: { 200: DeviceLists, ...Errors } },
  }),
  actOnDevice: route({
    method: 'POST',
    url: '/api/devices',
    service: 'agents',
    surfaces: ['web'],
    auth: 'user',
    rateLimit: 'web-agent-workspace',
    badRequest: {
      missing: { '*': 'Missing required fields: deviceId, action' },
      invalid: { action: 'Invalid action. Must be: approve, deny, or revoke' },
      body: INVALID_REQUEST_BODY,
    },
    summary: 'Approve or deny a pending device, or revoke an approved one',
    schema: { body: DeviceActionBody, response: { 200: DeviceActionResult, ...Errors } },
  }),
  listWorkflows: route({
    method: 'GET',
    url: '/api/workflows',
    service: 'agents',
    surfaces: ['web'],
    auth: 'none',
    summary:
      "The user's workflows with their nodes, last updated first, in pages of `limit` (default 50, at most 100) from `cursor`; 401 with an empty list without a session",
    schema: { querystring: WorkflowListQuery, response: { 200: WorkflowList, ...Errors } },
  }),
  createWorkflow: route({
    method: 'POST',
    url: '/api/workflows',
    service: 'agents',
    surfaces: ['web'],
    auth: 'user',
    summary: 'Create a workflow with its nodes (429 WORKFLOW_LIMIT at the per-user cap)',
    schema: { body: WorkflowCreateBody, response: { 201: WorkflowOne, ...Errors } },
  }),
  getWorkflow: route({
    method: 'GET',
    url: '/api/workflows/:workflowId',
    service: 'agents',
    surfaces: ['web'],
    auth: 'user',
    summary: 'One workflow with its nodes in creation order',
    schema: { params: WorkflowParams, response: { 200: WorkflowOne, ...Errors } },
  }),
  updateWorkflow: route({
    method: 'PUT',
    url: '/api/workflows/:workflowId',
    service: 'agents',
    surfaces: ['web'],
    auth: 'user',
    summary: 'Update a workflow; `nodes` replaces every node in one transaction',
    schema: { params: WorkflowParams, body: WorkflowUpdateBody, response: { 200: WorkflowOne, ...Errors } },
  }),
  deleteWorkflow: route({
    method: 'DELETE',
    url: '/api/workflows/:workflowId',
    service: 'agents',
    surfaces: ['web'],
    auth: 'user',
    summary: 'Delete a workflow and its nodes',
    schema: { params: WorkflowParams, response: { 200: WorkflowDeleted, ...Errors } },
  }),
  dashboardStats: route({
    method: 'GET',
    url: '/api/dashboard/stats',
    service: 'agents',
    surfaces: ['web'],
    auth: 'user',
    summary: 'Agent counts against the plan limit, installed skills and scheduled tasks',
    schema: { response: { 200: DashboardStats, ...Errors } },
  }),
};
