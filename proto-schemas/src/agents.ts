import { Type } from 'typebox';
import { Errors, ErrorBody, IsoDate, Nullable, Uuid } from './common.ts';
import { route } from './route.ts';
import { AgentConfig } from './workspace.ts';

/** Every status an agent record may hold. */
export const AgentStatus = Type.Union([
  Type.Literal('pending'),
  Type.Literal('provisioning'),
  Type.Literal('deploying'),
  Type.Literal('running'),
  Type.Literal('active'),
  Type.Literal('stopped'),
  Type.Literal('suspended'),
  Type.Literal('error'),
]);
/** Container health, from the engine's state and the 5 s probe. */
export const ContainerHealth = Type.Union([
  Type.Literal('healthy'),
  Type.Literal('starting'),
  Type.Literal('running'),
  Type.Literal('stopped'),
  Type.Literal('suspended'),
  Type.Literal('not_found'),
  Type.Literal('error'),
]);
/** While `suspended`: how deep the idle agent hibernates (paused: memory kept, resumes at once; stopped: boots on the next request). */
export const AgentHibernation = Type.Union([Type.Literal('paused'), Type.Literal('stopped')]);
export const ProvisionModel = Type.Union([
  Type.Literal('claude-opus-4-6'),
  Type.Literal('gpt-4'),
  Type.Literal('custom'),
]);
export const WebTier = Type.Union([Type.Literal('starter'), Type.Literal('pro'), Type.Literal('enterprise')]);
export const AgentAiProvider = Type.Union([
  Type.Literal('openrouter'),
  Type.Literal('gemini'),
  Type.Literal('groq'),
  Type.Literal('anthropic'),
  Type.Literal('openai'),
]);
export const PlanName = Type.String({ minLength: 1, maxLength: 32, pattern: '^[a-z_]+$' });
/** Long enough for anything sent; the 1-64-after-trimming rule is checked by the service. */
const AgentNameInput = Type.String({ minLength: 1, maxLength: 256 });
/** A user's free-form agent configuration. */
export const AgentConfigInput = Type.Record(Type.String({ maxLength: 128 }), Type.Unknown());
const AgentIdParams = Type.Object({ id: Uuid });
/** `/api/agents/:id/...` for routes of other areas (ai.ts has its own `AgentIdParams`, by `agentId`). */
export const AgentPathParams = AgentIdParams;

// ---- shapes --------------------------------------------------------------------------------
export const WebAgent = Type.Object({
  id: Uuid,
  name: Type.String(),
  model: Type.String(),
  status: AgentStatus,
  /** Null unless `suspended`; anything that reaches the agent wakes it first. */
  hibernation: Nullable(AgentHibernation),
  websocketUrl: Nullable(Type.String()),
  createdAt: IsoDate,
  updatedAt: IsoDate,
});
/** The image an agent runs and those its owner may update it to (POST /api/agents/:id/update {image}): the default first, then AGENT_IMAGES_ALLOWED. */
export const AgentImages = Type.Object({ current: Type.String(), allowed: Type.Array(Type.String()) });
export const WebAgentDetail = Type.Object({
  ...WebAgent.properties,
  plan: Type.String(),
  tier: Nullable(Type.String()),
  aiProvider: Type.String(),
  toolsProfile: Type.String(),
  subdomain: Type.String(),
  url: Type.String(),
  /** Why the agent failed, from a fixed set of messages; `lastErrorDetail` (admins only) in the engine's own words. */
  lastError: Nullable(Type.String()),
  lastErrorDetail: Type.Optional(Nullable(Type.String())),
  /** While the owner's plan no longer covers this running agent: when it stops (the grace period's end); else null. */
  stopsBeyondPlanAt: Nullable(IsoDate),
  images: AgentImages,
});
export const BackendAgentListItem = Type.Object({
  id: Uuid,
  status: AgentStatus,
  created: IsoDate,
  subdomain: Type.String(),
  url: Type.String(),
});
export const BackendAgentDetail = Type.Object({
  id: Uuid,
  status: AgentStatus,
  hibernation: Nullable(AgentHibernation),
  startedAt: Nullable(IsoDate),
  plan: Type.String(),
  subdomain: Type.String(),
  url: Type.String(),
  runtimeVersion: Nullable(Type.String()),
  verified: Type.Boolean(),
  verificationType: Nullable(Type.String()),
  attestationUid: Nullable(Type.String()),
  verifiedAt: Nullable(IsoDate),
  lastError: Nullable(Type.String()),
  lastErrorDetail: Nullable(Type.String()),
});
export const WebAgentList = Type.Object({
  agents: Type.Array(WebAgent),
  count: Type.Integer(),
  status: Type.Literal('ok'),
});
export const BackendCreateAgentBody = Type.Object(
  {
    name: AgentNameInput,
    config: Type.Optional(
      Type.Object(
        { plan: Type.Optional(PlanName), aiProvider: Type.Optional(AgentAiProvider) },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
export const BackendCreatedAgent = Type.Object({
  id: Uuid,
  name: Type.String(),
  agentId: Uuid,
  status: AgentStatus,
  subdomain: Type.String(),
  url: Type.String(),
  createdAt: IsoDate,
});
export const RenameAgentBody = Type.Object({ name: AgentNameInput }, { additionalProperties: false });
export const RenamedAgent = Type.Object({
  success: Type.Literal(true),
  agent: Type.Object({ id: Uuid, name: Type.String(), status: AgentStatus, updatedAt: IsoDate }),
});
export const UpdateAgentBody = Type.Object(
  {
    plan: Type.Optional(PlanName),
    aiProvider: Type.Optional(AgentAiProvider),
    config: Type.Optional(AgentConfigInput),
  },
  { additionalProperties: false },
);
export const UpdatedAgent = Type.Object({
  id: Uuid,
  plan: Type.String(),
  aiProvider: Type.String(),
  subdomain: Type.String(),
  status: AgentStatus,
  message: Type.String(),
});
export const DeletedAgent = Type.Object({ id: Uuid, deleted: Type.Literal(true) });
export const ProvisionAgentBody = Type.Object(
  {
    name: AgentNameInput,
    model: Type.Optional(ProvisionModel),
    config: Type.Optional(AgentConfigInput),
    tier: Type.Optional(WebTier),
  },
  { additionalProperties: false },
);
export const ProvisionedAgent = Type.Object({
  id: Uuid,
  name: Type.String(),
  status: AgentStatus,
  websocketUrl: Nullable(Type.String()),
  model: Type.String(),
  createdAt: IsoDate,
});
export const ProvisionResponse = Type.Object({ success: Type.Literal(true), agent: ProvisionedAgent });
export const ProvisionedAgentList = Type.Object({ agents: Type.Array(ProvisionedAgent), count: Type.Integer() });
/** The outcome of a lifecycle operation: the agent's status and its container's health after it. */
export const LifecycleResult = Type.Object({
  success: Type.Literal(true),
  id: Uuid,
  status: AgentStatus,
  health: ContainerHealth,
  image: Nullable(Type.String()),
  message: Type.String(),
});
export const UpdateImageBody = Type.Object(
  { image: Type.Optional(Type.String({ minLength: 1, maxLength: 512, pattern: '^[^\\s\\u0000]+$' })) },
  { additionalProperties: false },
);
/** An operation the owner asks for on the web; its outcome comes as an `agent-status` event carrying `action`. */
export const AgentAction = Type.Union([
  Type.Literal('start'),
  Type.Literal('stop'),
  Type.Literal('restart'),
  Type.Literal('repair'),
  Type.Literal('reset-memory'),
  Type.Literal('update'),
]);
/** Web lifecycle answer (202): the operation is queued; its result arrives on GET /api/events. */
export const AgentActionAccepted = Type.Object({ id: Uuid, action: AgentAction, status: Type.Literal('queued') });
export const AgentToken = Type.Object({ token: Type.String() });
export const UserRuntime = Type.Object({
  runtimeUrl: Nullable(Type.String()),
  instanceId: Nullable(Type.String()),
  gatewayToken: Nullable(Type.String()),
});
export const AgentStats = Type.Object({
  id: Uuid,
  status: Type.String(),
  health: ContainerHealth,
  cpu: Type.Union([Type.Number(), Type.Literal('—')]),
  memory: Type.Union([Type.Number(), Type.Literal('—')]),
  memoryLimit: Type.Union([Type.Number(), Type.Literal('—')]),
  source: Type.Union([Type.Literal('runtime'), Type.Literal('probe')]),
});
export const DeploymentBody = Type.Object({ agentId: Uuid }, { additionalProperties: false });
export const Deployment = Type.Object({
  success: Type.Literal(true),
  agentId: Uuid,
  status: AgentStatus,
  url: Type.String(),
  container: Type.Object({ id: Type.String(), status: ContainerHealth, hostPort: Type.Integer() }),
});
export const RuntimeVersion = Type.Object({
  driver: Type.String(),
  engine: Type.String(),
  version: Type.String(),
  image: Type.String(),
  deployedAt: IsoDate,
  /** Whether the engine (the container engine, the cluster's API) answers its readiness check now. */
  reachable: Type.Boolean(),
});
export const RuntimeInstance = Type.Object({
  id: Type.String(),
  status: Type.String(),
  metadata: Type.Object({
    agentId: Type.String(),
    userId: Type.String(),
    image: Type.String(),
    hostPort: Nullable(Type.Integer()),
    startedAt: Nullable(Type.String()),
    orphan: Type.Boolean(),
  }),
});
export const RuntimeInstances = Type.Object({ instances: Type.Array(RuntimeInstance), count: Type.Integer() });
export const MaintenanceQuery = Type.Object({ agentId: Uuid }, { additionalProperties: false });
export const MaintenanceBody = Type.Object({ agentId: Uuid }, { additionalProperties: false });
export const MaintenanceStatus = Type.Object({
  agentId: Uuid,
  live: Type.Boolean(),
  ready: Nullable(Type.Boolean()),
  health: ContainerHealth,
});
export const CloneHealth = Type.Object({
  status: Type.Literal('ok'),
  service: Type.Literal('clone'),
  implemented: Type.Literal(false),
});

export const InstanceParams = Type.Object({ userId: Uuid });
export const InstanceActionParams = Type.Object({
  userId: Uuid,
  action: Type.Union([
    Type.Literal('start'),
    Type.Literal('stop'),
    Type.Literal('restart'),
    Type.Literal('repair'),
    Type.Literal('reset-memory'),
  ]),
});
export const UserInstance = Type.Object({
  userId: Uuid,
  instanceId: Uuid,
  name: Type.String(),
  status: AgentStatus,
  health: ContainerHealth,
  url: Type.String(),
  startedAt: Nullable(IsoDate),
});
/** `/api/provision`: channel tokens or a runtime-only business deployment; a body email is ignored. */
export const RuntimeProvisionBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
    telegramBotToken: Type.Optional(Type.String({ minLength: 1, maxLength: 512 })),
    discordBotToken: Type.Optional(Type.String({ minLength: 1, maxLength: 512 })),
    whatsappNumber: Type.Optional(Type.String({ minLength: 1, maxLength: 32 })),
    autoProvision: Type.Optional(Type.Boolean()),
    agentType: Type.Optional(Type.String({ minLength: 1, maxLength: 32, pattern: '^[a-z_-]+$' })),
    email: Type.Optional(Type.String({ maxLength: 320 })),
  },
  { additionalProperties: false },
);
export const RuntimeProvisioned = Type.Object({
  success: Type.Literal(true),
  userId: Type.Optional(Uuid),
  subdomain: Type.Optional(Type.String()),
  url: Type.String(),
  streamKey: Type.Optional(Nullable(Type.String())),
  liveStreamId: Type.Optional(Nullable(Type.String())),
  status: Type.Optional(Type.Literal('deploying')),
  controlUiUrl: Type.Optional(Type.String()),
  container: Type.Optional(Type.Object({ status: Type.Literal('deploying') })),
});

// ---- transcript (`/api/agents/:id/messages`): read from the agent gateway's own sessions ----
export const AgentMessagesQuery = Type.Object(
  {
    sessionKey: Type.Optional(Type.String({ minLength: 1, maxLength: 256, pattern: '^[A-Za-z0-9:._@+-]+$' })),
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 50 }),
  },
  { additionalProperties: false },
);
export const AgentMessage = Type.Object({
  id: Nullable(Type.String()),
  role: Type.String(),
  text: Type.String(),
  timestamp: Nullable(IsoDate),
  model: Nullable(Type.String()),
});
export const AgentSession = Type.Object({
  key: Type.String(),
  kind: Nullable(Type.String()),
  updatedAt: Nullable(IsoDate),
});
export const AgentMessages = Type.Object({
  agentId: Uuid,
  sessionKey: Nullable(Type.String()),
  sessions: Type.Array(AgentSession),
  messages: Type.Array(AgentMessage),
  count: Type.Integer(),
  status: Type.Literal('ok'),
  source: Type.Literal('gateway'),
});

// ---- one agent's configuration (`/api/agents/:id/config`, docs/agent-runtime.md) ----
export const AgentLogLevel = Type.Union(
  ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((v) => Type.Literal(v)),
);
export const AgentDmPolicy = Type.Union([
  Type.Literal('pairing'),
  Type.Literal('allowlist'),
  Type.Literal('open'),
  Type.Literal('disabled'),
]);
/** A model the agent asks the platform's AI gateway for: `auto`, a provisioning choice, or a catalog id `<vendor>/<model>` (the gateway checks the plan at each call). */
export const AgentModel = Type.String({
  minLength: 1,
  maxLength: 128,
  pattern: '^(auto|claude-opus-4-6|gpt-4|custom|[a-z0-9][a-z0-9-]*/[A-Za-z0-9._:/-]+)$',
});
/**
 * How a saved configuration reaches the agent: `hot-reload` (its running gateway takes the new file
 * in place, same container), `restart` (its container is rebuilt from it, status `deploying` then
 * back), `next-start` (it does not run now: its next start reads it).
 */
export const AgentConfigApplied = Type.Union([
  Type.Literal('hot-reload'),
  Type.Literal('restart'),
  Type.Literal('next-start'),
]);
/** A previous configuration of the agent, kept for a restore (the 10 newest). */
export const AgentConfigBackup = Type.Object({ id: Type.String(), timestamp: IsoDate, model: Type.String() });
export const AgentConfigBackups = Type.Object({ backups: Type.Array(AgentConfigBackup) });
/**
 * A change of the agent's configuration: the whole document (`config`, an object or its JSON text)
 * and/or the common fields, each set on the document (or on the current one when none is sent).
 */
export const AgentConfigChange = Type.Object(
  {
    config: Type.Optional(Type.Unknown()),
    model: Type.Optional(AgentModel),
    logLevel: Type.Optional(AgentLogLevel),
    channels: Type.Optional(
      Type.Object(
        { telegram: Type.Optional(Type.Boolean()), discord: Type.Optional(Type.Boolean()) },
        { additionalProperties: false },
      ),
    ),
    resetTriggers: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 20 })),
    dmPolicy: Type.Optional(AgentDmPolicy),
  },
  { additionalProperties: false },
);
export const RestoreAgentConfigBody = Type.Object(
  { backupId: Type.String({ minLength: 1, maxLength: 64, pattern: '^acb_[A-Za-z0-9_-]+$' }) },
  { additionalProperties: false },
);
/**
 * The agent's configuration: the one saved for it, else the defaults of its plan (`isDefault`);
 * `tools.profile` as fixed at creation. `appliedConfig` is the openclaw.json the platform gives its
 * gateway from it (its secrets left out); `checkedBy` the OpenClaw that checks saves (null: none).
 */
export const AgentConfigView = Type.Object({
  agentId: Uuid,
  config: AgentConfig,
  isDefault: Type.Boolean(),
  updatedAt: IsoDate,
  model: Type.String(),
  appliedConfig: AgentConfig,
  checkedBy: Nullable(Type.String()),
  backups: Type.Array(AgentConfigBackup),
});
/** Saved (the previous one backed up as `backupId`) and on its way to the agent as `applied` says. */
export const AgentConfigSaved = Type.Object({
  success: Type.Literal(true),
  agentId: Uuid,
  config: AgentConfig,
  model: Type.String(),
  updatedAt: IsoDate,
  applied: AgentConfigApplied,
  checkedBy: Nullable(Type.String()),
  backupId: Type.String(),
  restoredFrom: Type.Optional(Type.String()),
  backups: Type.Array(AgentConfigBackup),
});

// ---- verification ------------------------------------------------------------------------------
export const VerificationType = Type.Union([
  Type.Literal('eas'),
  Type.Literal('coinbase'),
  Type.Literal('ens'),
  Type.Literal('webauthn'),
]);
const EthAddress = Type.String({ pattern: '^0x[0-9a-fA-F]{40}$' });
/** Web: only the type counts (the platform sets the rest); backend callers may also give the outcome. */
export const VerifyAgentBody = Type.Object(
  {
    verificationType: VerificationType,
    verified: Type.Optional(Type.Boolean()),
    verifierAddress: Type.Optional(EthAddress),
    attestationUid: Type.Optional(Type.String({ pattern: '^0x[0-9a-fA-F]{64}$' })),
    metadata: Type.Optional(Type.Record(Type.String({ maxLength: 64 }), Type.Unknown(), { maxProperties: 32 })),
  },
  { additionalProperties: false },
);
export const AgentVerification = Type.Object({
  agentId: Uuid,
  verified: Type.Boolean(),
  verificationType: Nullable(VerificationType),
  attestationUid: Nullable(Type.String()),
  verifierAddress: Nullable(Type.String()),
  metadata: Nullable(Type.Record(Type.String(), Type.Unknown())),
  verifiedAt: Nullable(IsoDate),
});
export const VerificationResult = Type.Object({ success: Type.Literal(true), verification: AgentVerification });

/** Backend: done when answered (200). Web (owner only): 202 once queued, the outcome as an agent-status event, counted per user. */
const lifecycle = (action: string, summary: string, body?: typeof UpdateImageBody) =>
  route({
    method: 'POST',
    url: `/api/agents/:id/${action}`,
    service: 'agents',
    surfaces: ['web', 'backend'],
    auth: 'user-or-service',
    rateLimit: ['web-gateway', 'web-agent-operations'],
    summary,
    schema: {
      params: AgentIdParams,
      ...(body ? { body } : {}),
      response: { 200: LifecycleResult, 202: AgentActionAccepted, ...Errors },
    },
  });

export const agentRoutes = {
  list: route({
    method: 'GET',
    url: '/api/agents',
    service: 'agents',
    surfaces: ['web', 'backend'],
    auth: 'none',
    rateLimit: 'web-gateway',
    summary:
      'Agents: web `{agents, count, status}` of the signed-in user (empty without a session); backend a flat array',
    schema: { response: { 200: Type.Union([WebAgentList, Type.Array(BackendAgentListItem)]), ...Errors } },
  }),
  create: route({
    method: 'POST',
    url: '/api/agents',
    service: 'agents',
    surfaces: ['backend'],
    auth: 'service',
    summary: 'Create an agent for the context user (x-user-id); status pending, then provisioned',
    schema: { body: BackendCreateAgentBody, response: { 201: BackendCreatedAgent, ...Errors } },
  }),
  get: route({
    method: 'GET',
    url: '/api/agents/:id',
    service: 'agents',
    surfaces: ['web', 'backend'],
    auth: 'user-or-service',
    rateLimit: 'web-gateway',
    summary: 'One agent: web `{agent, status}`, backend the detail object; 404 when not owned',
    schema: {
      params: AgentIdParams,
      response: {
        200: Type.Union([Type.Object({ agent: WebAgentDetail, status: Type.Literal('ok') }), BackendAgentDetail]),
        ...Errors,
      },
    },
  }),
  rename: route({
    method: 'PATCH',
    url: '/api/agents/:id',
    service: 'agents',
    surfaces: ['web'],
    auth: 'user',
    rateLimit: 'web-gateway',
    summary: 'Rename an agent (1 to 64 characters after trimming)',
    schema: { params: AgentIdParams, body: RenameAgentBody, response: { 200: RenamedAgent, ...Errors } },
  }),
  update: route({
    method: 'PUT',
    url: '/api/agents/:id',
    service: 'agents',
    surfaces: ['backend'],
    auth: 'service',
    summary: 'Change plan, AI provider or configuration',
    schema: { params: AgentIdParams, body: UpdateAgentBody, response: { 200: UpdatedAgent, ...Errors } },
  }),
  remove: route({
    method: 'DELETE',
    url: '/api/agents/:id',
    service: 'agents',
    surfaces: ['web', 'backend'],
    auth: 'user-or-service',
    rateLimit: ['web-gateway', 'web-agent-operations'],
    summary:
      "Delete an agent: its container, state, configuration, secrets, schedules and heartbeats (usage and cost rows stay); deleted:true even when absent (web: when it was the owner's; anyone else's is 404)",
    schema: { params: AgentIdParams, response: { 200: DeletedAgent, ...Errors } },
  }),
  start: lifecycle('start', "Start the agent's container"),
  stop: lifecycle('stop', "Stop the agent's container"),
  restart: lifecycle('restart', "Restart the agent's container"),
  updateImage: lifecycle(
    'update',
    'Replace the image: start the new container, wait for /readyz, swap; on failure the previous image stays and the answer is 500',
    UpdateImageBody,
  ),
  repair: lifecycle('repair', 'Recreate the container from the stored configuration'),
  resetMemory: lifecycle('reset-memory', "Remove the agent's memory and identity state and restart"),
  provision: route({
    method: 'POST',
    url: '/api/agents/provision',
    service: 'agents',
    surfaces: ['web'],
    auth: 'user',
    rateLimit: 'web-gateway',
    summary: 'Provision an agent: created at once as provisioning, then running or error',
    schema: { body: ProvisionAgentBody, response: { 201: ProvisionResponse, 402: ErrorBody, ...Errors } },
  }),
  provisioned: route({
    method: 'GET',
    url: '/api/agents/provision',
    service: 'agents',
    surfaces: ['web'],
    auth: 'user',
    rateLimit: 'web-gateway',
    summary: "The signed-in user's provisioned agents",
    schema: { response: { 200: ProvisionedAgentList, ...Errors } },
  }),
  token: route({
    method: 'GET',
    url: '/api/agents/:id/token',
    service: 'agents',
    surfaces: ['web', 'backend'],
    auth: 'user-or-service',
    rateLimit: 'web-gateway',
    summary: "The agent's gateway token (owner only)",
    schema: { params: AgentIdParams, response: { 200: AgentToken, ...Errors } },
  }),
  stats: route({
    method: 'GET',
    url: '/api/agents/:id/stats',
    service: 'agents',
    surfaces: ['web', 'backend'],
    auth: 'user-or-service',
    rateLimit: 'web-gateway',
    summary: 'Container stats; when the runtime cannot answer, the gateway probes with cpu and memory `—`',
    schema: { params: AgentIdParams, response: { 200: AgentStats, ...Errors } },
  }),
  messages: route({
    method: 'GET',
    url: '/api/agents/:id/messages',
    service: 'agents',
    surfaces: ['web', 'backend'],
    auth: 'user-or-service',
    rateLimit: 'web-gateway',
    summary:
      "The agent's conversation, read from its gateway's sessions (`sessionKey`, else the most recent session); 502 when the gateway cannot answer",
    schema: { params: AgentIdParams, querystring: AgentMessagesQuery, response: { 200: AgentMessages, ...Errors } },
  }),
  config: route({
    method: 'GET',
    url: '/api/agents/:id/config',
    service: 'agents',
    surfaces: ['web'],
    auth: 'user',
    rateLimit: 'web-gateway',
    summary: "The agent's configuration (its own, else its plan's defaults); 404 when not owned",
    schema: { params: AgentIdParams, response: { 200: AgentConfigView, ...Errors } },
  }),
  saveConfig: route({
    method: 'PUT',
    url: '/api/agents/:id/config',
    service: 'agents',
    surfaces: ['web'],
    auth: 'user',
    badRequest: { body: 'Invalid request body' },
    rateLimit: 'web-gateway',
    summary:
      "Change the agent's configuration (the whole document and/or model, log level, channels on/off, reset triggers, DM policy), checked by the installed OpenClaw's own validator (400 naming the path); the previous one is backed up; applied by hot reload where the gateway takes it live, else by a restart (`applied` says which)",
    schema: { params: AgentIdParams, body: AgentConfigChange, response: { 200: AgentConfigSaved, ...Errors } },
  }),
  configBackups: route({
    method: 'GET',
    url: '/api/agents/:id/config/backups',
    service: 'agents',
    surfaces: ['web'],
    auth: 'user',
    rateLimit: 'web-gateway',
    summary: "The agent's previous configurations (the 10 newest, newest first); 404 when not owned",
    schema: { params: AgentIdParams, response: { 200: AgentConfigBackups, ...Errors } },
  }),
  restoreConfig: route({
    method: 'POST',
    url: '/api/agents/:id/config/restore',
    service: 'agents',
    surfaces: ['web'],
    auth: 'user',
    badRequest: { body: 'Invalid request body' },
    rateLimit: 'web-gateway',
    summary:
      "Make one of the agent's backups its configuration again (the current one is backed up first), checked and applied as a save is",
    schema: { params: AgentIdParams, body: RestoreAgentConfigBody, response: { 200: AgentConfigSaved, ...Errors } },
  }),
  verification: route({
    method: 'GET',
    url: '/api/agents/:id/verification',
    service: 'agents',
    surfaces: ['backend'],
    auth: 'service',
    summary: "The agent's verification status",
    schema: { params: AgentIdParams, response: { 200: AgentVerification, ...Errors } },
  }),
  verifyStatus: route({
    method: 'GET',
    url: '/api/agents/:id/verify',
    service: 'agents',
    surfaces: ['web', 'backend'],
    auth: 'user-or-service',
    rateLimit: 'web-gateway',
    summary: "The agent's verification status (owner only)",
    schema: { params: AgentIdParams, response: { 200: AgentVerification, ...Errors } },
  }),
  verify: route({
    method: 'POST',
    url: '/api/agents/:id/verify',
    service: 'agents',
    surfaces: ['web', 'backend'],
    auth: 'user-or-service',
    rateLimit: 'web-gateway',
    summary:
      'Verify the agent (`eas`, `coinbase`, `ens`, `webauthn`): the web sets verified, verifier address and metadata itself; backend callers may give them',
    schema: { params: AgentIdParams, body: VerifyAgentBody, response: { 200: VerificationResult, ...Errors } },
  }),
  unverify: route({
    method: 'DELETE',
    url: '/api/agents/:id/verify',
    service: 'agents',
    surfaces: ['web', 'backend'],
    auth: 'user-or-service',
    rateLimit: 'web-gateway',
    summary: "Clear the agent's verification",
    schema: { params: AgentIdParams, response: { 200: VerificationResult, ...Errors } },
  }),
  userRuntime: route({
    method: 'GET',
    url: '/api/user/runtime',
    service: 'agents',
    surfaces: ['web'],
    auth: 'user',
    summary: "The user's runtime URL, instance id and gateway token",
    schema: { response: { 200: UserRuntime, ...Errors } },
  }),
  cloneHealth: route({
    method: 'GET',
    url: '/api/agents/clone',
    service: 'agents',
    surfaces: ['web', 'backend'],
    auth: 'none',
    rateLimit: 'web-gateway',
    summary: 'Clone service health',
    schema: { response: { 200: CloneHealth, ...Errors } },
  }),
  clone: route({
    method: 'POST',
    url: '/api/agents/clone',
    service: 'agents',
    surfaces: ['web', 'backend'],
    auth: 'none',
    rateLimit: 'web-gateway',
    summary: 'Cloning is not implemented: always 501, no payment flow starts',
    schema: { response: { 501: ErrorBody, ...Errors } },
  }),
  deployments: route({
    method: 'POST',
    url: '/api/deployments',
    service: 'agents',
    surfaces: ['backend'],
    auth: 'service',
    rateLimit: 'backend-deployments',
    summary: "Deploy an agent's container: 201 new, 200 with the same shape when already active",
    schema: { body: DeploymentBody, response: { 200: Deployment, 201: Deployment, ...Errors } },
  }),
  runtimeVersion: route({
    method: 'GET',
    url: '/api/runtime/version',
    service: 'agents',
    surfaces: ['backend'],
    auth: 'service',
    summary: 'Runtime driver, engine version and agent image; deployedAt is the time of the request',
    schema: { response: { 200: RuntimeVersion, ...Errors } },
  }),
  runtimeInstances: route({
    method: 'GET',
    url: '/api/runtime/instances',
    service: 'agents',
    surfaces: ['backend'],
    auth: 'service',
    summary: "This platform's agent containers with metadata (orphan: no agent record)",
    schema: { response: { 200: RuntimeInstances, ...Errors } },
  }),
  runtimeInstanceStats: route({
    method: 'GET',
    url: '/api/runtime/instances/:id/stats',
    service: 'agents',
    surfaces: ['backend'],
    auth: 'service',
    summary: 'Container stats of an agent (path: agent id)',
    schema: { params: AgentIdParams, response: { 200: AgentStats, ...Errors } },
  }),
  runtimeProxy: route({
    method: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'],
    url: '/api/runtime/proxy/:agentId/*',
    service: 'agents',
    surfaces: ['backend'],
    auth: 'service',
    websocket: true,
    summary: "HTTP and WebSocket proxy to the agent's gateway; the prefix is stripped",
    schema: { params: Type.Object({ agentId: Uuid, '*': Type.String() }), response: { ...Errors } },
  }),
  instance: route({
    method: 'GET',
    url: '/api/instance/:userId',
    service: 'agents',
    surfaces: ['web'],
    auth: 'user',
    rateLimit: 'web-instance',
    summary: "The signed-in user's runtime instance (404 for anyone else's)",
    schema: { params: InstanceParams, response: { 200: UserInstance, ...Errors } },
  }),
  instanceStats: route({
    method: 'GET',
    url: '/api/instance/:userId/stats',
    service: 'agents',
    surfaces: ['web'],
    auth: 'user',
    rateLimit: 'web-instance',
    summary: "Stats of the user's runtime instance; `—` for cpu and memory when only the gateway's probes answer",
    schema: { params: InstanceParams, response: { 200: AgentStats, ...Errors } },
  }),
  instanceAction: route({
    method: 'POST',
    url: '/api/instance/:userId/:action',
    service: 'agents',
    surfaces: ['web'],
    auth: 'user',
    rateLimit: 'web-instance',
    summary: "Start, stop, restart, repair or reset the memory of the user's runtime instance",
    schema: { params: InstanceActionParams, response: { 200: LifecycleResult, ...Errors } },
  }),
  runtimeProvision: route({
    method: 'POST',
    url: '/api/provision',
    service: 'agents',
    surfaces: ['web'],
    auth: 'user',
    rateLimit: 'web-provision',
    summary:
      "Provision the user's runtime: backend URL, then fallback URL, then the platform's own runtime; 502 when all fail",
    schema: { body: RuntimeProvisionBody, response: { 200: RuntimeProvisioned, 402: ErrorBody, ...Errors } },
  }),
  maintenanceStatus: route({
    method: 'GET',
    url: '/api/runtime/maintenance',
    service: 'agents',
    surfaces: ['backend'],
    auth: 'service',
    summary: "Liveness and readiness of an agent's gateway",
    schema: { querystring: MaintenanceQuery, response: { 200: MaintenanceStatus, ...Errors } },
  }),
  maintenanceRestart: route({
    method: 'POST',
    url: '/api/runtime/maintenance',
    service: 'agents',
    surfaces: ['backend'],
    auth: 'service',
    summary: "Restart an agent's container",
    schema: { body: MaintenanceBody, response: { 200: LifecycleResult, ...Errors } },
  }),
};
