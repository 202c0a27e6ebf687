import { HttpError } from '@agentyard/http';

const AGENT_BUSY = 'AGENT_BUSY';

/** The agents service's error catalogue: agents, provisioning and the runtime, then the workspace area. */
export const AgentErrors = {
  notFound: () => new HttpError(404, 'Agent not found'),
  invalidConfig: (message: string) => new HttpError(400, message),
  configBackupNotFound: () => new HttpError(404, 'Backup not found'),
  configCheckUnavailable: () =>
    new HttpError(503, "The configuration could not be checked by OpenClaw's validator; try again shortly"),
  badName: () => new HttpError(400, 'Agent name must be 1 to 64 characters'),
  userContextRequired: () => new HttpError(401, 'User context required (x-user-id)'),
  subscriptionRequired: () => new HttpError(403, 'Active subscription required', 'SUBSCRIPTION_REQUIRED'),
  skillLimit: (limit: number) => new HttpError(429, `Skill limit reached for your plan (${limit})`, 'SKILL_LIMIT'),
  agentLimit: (limit: number) => new HttpError(429, `Agent limit reached for your plan (${limit})`, 'AGENT_LIMIT'),
  userResourcesLimit: () =>
    new HttpError(
      429,
      'Your running agents already hold the most memory and CPUs one user may have: stop one first',
      'AGENT_RESOURCES_LIMIT',
    ),
  platformAtCapacity: () =>
    new HttpError(
      503,
      'The platform is at capacity: no more agents can run right now, try again later',
      'PLATFORM_AT_CAPACITY',
    ),
  provisioningDisabled: () => new HttpError(503, 'Provisioning is temporarily disabled'),
  provisioningFailed: () => new HttpError(502, 'Provisioning failed on every path'),
  runtimeFailed: (operation: string) =>
    new HttpError(500, `Agent ${operation} failed: the container host is unavailable or refused`),
  updateRolledBack: () =>
    new HttpError(500, 'Update failed: the new image did not become ready; the previous image was restored'),
  operationsUnavailable: () => new HttpError(503, 'Agent operations are temporarily unavailable'),
  busy: () => new HttpError(409, 'Another operation on this agent is under way; try again shortly', AGENT_BUSY),
  notDeployed: () => new HttpError(404, 'Agent has no running gateway'),
  cloneNotImplemented: () => new HttpError(501, 'Agent cloning is not implemented'),
  sessionNotFound: () => new HttpError(404, 'Session not found'),
  unreachable: (id: string, health: string) =>
    new HttpError(502, 'Agent unreachable: neither the runtime nor the agent gateway answered', undefined, {
      id,
      health,
    }),
  gatewayUnavailable: () => new HttpError(502, 'Agent gateway unavailable'),
  noGatewayToken: () => new HttpError(404, 'Agent has no gateway token yet'),
  controlUiPathNotFound: () => new HttpError(404, 'Not found'),
  controlUiNotInstalled: () =>
    new HttpError(
      503,
      'Control UI is not available: this platform has no copy of the OpenClaw Control UI (CONTROL_UI_ROOT)',
    ),
  stillProvisioning: () =>
    new HttpError(
      409,
      'The agent is still being provisioned; try again once it is running or has failed',
      'AGENT_PROVISIONING',
    ),
  wakeFailed: () =>
    new HttpError(503, 'The agent was hibernating and did not wake in time; try again shortly', 'AGENT_WAKE_FAILED'),
  imageNotAllowed: () => new HttpError(400, 'That image is not one this platform offers', 'IMAGE_NOT_ALLOWED'),
};

/** Whether `error` is AgentErrors.busy(): another operation on the agent held it too long. */
export const isAgentBusy = (error: unknown): boolean => error instanceof HttpError && error.code === AGENT_BUSY;

/** Every error of the workspace area (configuration, devices, workflows), with the interface's messages. */
export const WorkspaceErrors = {
  invalidConfigObject: () => new HttpError(400, 'Invalid config object'),
  configNotJson: () => new HttpError(400, 'Config is not valid JSON'),
  configRejected: (message: string) => new HttpError(400, message),
  backupNotFound: () => new HttpError(404, 'Backup not found'),
  deviceNotPending: () => new HttpError(400, 'Device is not pending'),
  deviceNotApproved: () => new HttpError(400, 'Device is not approved'),
  deviceNotFound: () => new HttpError(404, 'Device not found'),
  workflowNameRequired: () => new HttpError(400, 'Workflow name is required'),
  invalidNodeConfig: () => new HttpError(400, 'Node config must be a JSON object'),
  invalidNodePosition: () => new HttpError(400, 'Node position must be JSON {x, y} with numbers'),
  workflowLimit: (limit: number) =>
    new HttpError(429, `Workflow limit reached: at most ${limit} per user; delete one first`, 'WORKFLOW_LIMIT', {
      limit,
    }),
  invalidCursor: () => new HttpError(400, 'Invalid cursor: pass the nextCursor of the previous page', 'INVALID_CURSOR'),
  workflowNotFound: () => new HttpError(404, 'Workflow not found'),
  userNotFound: () => new HttpError(404, 'User not found'),
};

/** Every error of an agent's logs, files, metrics and events, named once. */
export const AgentWorkspaceErrors = {
  noLogs: () => new HttpError(501, 'Logs are not kept for agents run as local processes (RUNTIME_DRIVER=process)'),
  noWorkspace: () =>
    new HttpError(501, "The agent's files are out of the platform's reach on a remote container engine"),
  noState: () => new HttpError(404, 'The agent has no workspace yet'),
  badPath: (message: string) => new HttpError(400, message),
  missing: (message: string) => new HttpError(404, message),
  fileTooLarge: (message: string, limit: number) => new HttpError(413, message, 'FILE_TOO_LARGE', { limit }),
  workspaceFull: (message: string, limit: number) => new HttpError(429, message, 'WORKSPACE_FULL', { limit }),
  engineFailed: () => new HttpError(502, 'The container engine did not answer'),
  busy: () => new HttpError(409, "Another change to this agent's files is under way; try again shortly", 'AGENT_BUSY'),
  unavailable: () => new HttpError(503, "The agent's files are temporarily unavailable"),
};

/** Every error of an agent's snapshots, restore and clone (issue 30), named once. */
export const SnapshotErrors = {
  notFound: () => new HttpError(404, 'Snapshot not found'),
  notReady: () =>
    new HttpError(409, 'Snapshot is not ready: it is still being taken, or taking it failed', 'SNAPSHOT_NOT_READY'),
  unsupported: () =>
    new HttpError(
      501,
      "Snapshots need the agent's state in the platform's reach (a local container engine or the process driver)",
    ),
  noState: () => new HttpError(409, 'The agent has no state to snapshot yet'),
  badArchive: (message: string) =>
    new HttpError(400, `Not a snapshot archive this platform made: ${message}`, 'SNAPSHOT_INVALID'),
  tooLarge: (limit: number) =>
    new HttpError(413, `Snapshot archive is larger than your plan allows (${limit} bytes)`, 'SNAPSHOT_TOO_LARGE', {
      limit,
    }),
  quotaReached: (usedBytes: number, quotaBytes: number) =>
    new HttpError(
      429,
      `Your snapshots take ${usedBytes} of the ${quotaBytes} bytes your plan allows: delete some first`,
      'SNAPSHOT_QUOTA',
      { usedBytes, quotaBytes },
    ),
};

/** Every error of an agent's messaging channels and their vault (issue 29), named once. */
export const ChannelErrors = {
  unknown: (channel: string) => new HttpError(404, `Unknown channel: ${channel}`),
  unsupported: (why: string) =>
    new HttpError(501, `Channel not available on this platform: ${why}`, 'CHANNEL_UNSUPPORTED'),
  invalid: (message: string) => new HttpError(400, `Invalid channel settings: ${message}`),
  notBound: () => new HttpError(404, 'Channel not connected'),
};

/** Every error of mission control, swarms, colony and installations (issue 32), named once. */
export const FleetErrors = {
  invalidCursor: () => new HttpError(400, 'Invalid cursor: pass the nextCursor of the previous page', 'INVALID_CURSOR'),
  soulNotSupported: () =>
    new HttpError(
      501,
      "The colony's soul action proxied an external service this platform does not have; use tree or diagnostics (docs/fleet.md)",
      'NOT_SUPPORTED',
    ),
  swarmNotFound: () => new HttpError(404, 'Swarm not found'),
  swarmRunNotFound: () => new HttpError(404, 'Swarm run not found'),
  swarmEmpty: () => new HttpError(409, 'The swarm has no members left: add agents first', 'SWARM_EMPTY'),
  memberNotFound: () => new HttpError(404, 'Agent not found'),
  swarmLimit: (limit: number) =>
    new HttpError(429, `Swarm limit reached for your plan (${limit})`, 'SWARM_LIMIT', { limit }),
  memberLimit: (limit: number) =>
    new HttpError(429, `A swarm on your plan has at most ${limit} members`, 'SWARM_MEMBER_LIMIT', { limit }),
  runLimit: (limit: number) =>
    new HttpError(429, `Swarm run limit reached for your plan (${limit} a day)`, 'SWARM_RUN_LIMIT', { limit }),
  installationNotFound: () => new HttpError(404, 'Installation not found'),
  gatewayUrlRequired: () => new HttpError(400, 'gatewayUrl is required when mode is remote'),
};

/** The errors of working with a running agent, named once. */
export const AgentWorkErrors = {
  notRunning: () => new HttpError(409, 'Agent is not running', 'AGENT_NOT_RUNNING'),
  gatewayTimeout: () => new HttpError(504, 'Agent gateway did not answer in time'),
  gatewayUnavailable: () => new HttpError(502, 'Agent gateway unavailable'),
  answerTooLarge: (limit: number) => new HttpError(502, `The agent's answer is larger than ${limit} bytes`),
  reservedSessionKey: () => new HttpError(400, 'sessionKey may not start with subagent:, cron: or acp:'),
  badCursor: () => new HttpError(400, 'cursor is not one this service wrote'),
  badMemoryPath: () =>
    new HttpError(400, 'path must be memory/<name>.md (letters, digits, ., _ and -; no .., no absolute path)'),
  memoryFileNotFound: () => new HttpError(404, 'Memory file not found'),
};

export const SkillErrors = {
  notBundled: (name: string) => new HttpError(404, `No bundled skill named ${name}`),
  notInstalled: (name: string) => new HttpError(404, `Skill ${name} is not installed`),
  badSkillMd: (name: string) =>
    new HttpError(400, `skillMd must start with a frontmatter block (---) with name: ${name} and a description`),
};
