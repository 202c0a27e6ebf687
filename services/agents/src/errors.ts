import { HttpError } from '@agentyard/http';

const AGENT_BUSY = 'AGENT_BUSY';

/** The agents service's error catalogue: agents, provisioning and the runtime, then the workspace area. */
export const AgentErrors = {
  notFound: () => new HttpError(404, 'Agent not found'),
  invalidConfig: (message: string) => new HttpError(400, message),
  badName: () => new HttpError(400, 'Agent name must be 1 to 64 characters'),
  userContextRequired: () => new HttpError(401, 'User context required (x-user-id)'),
  subscriptionRequired: () => new HttpError(403, 'Active subscription required', 'SUBSCRIPTION_REQUIRED'),
  skillLimit: (limit: number) => new HttpError(429, `Skill limit reached for your plan (${limit})`, 'SKILL_LIMIT'),
  agentLimit: (limit: number) => new HttpError(429, `Agent limit reached for your plan (${limit})`, 'AGENT_LIMIT'),
  provisioningDisabled: () => new HttpError(503, 'Provisioning is temporarily disabled'),
  provisioningFailed: () => new HttpError(502, 'Provisioning failed on every path'),
  runtimeFailed: (operation: string) => new HttpError(500, `Agent ${operation} failed: the container host is unavailable or refused`),
  updateRolledBack: () => new HttpError(500, 'Update failed: the new image did not become ready; the previous image was restored'),
  operationsUnavailable: () => new HttpError(503, 'Agent operations are temporarily unavailable'),
  busy: () => new HttpError(409, 'Another operation on this agent is under way; try again shortly', AGENT_BUSY),
  notDeployed: () => new HttpError(404, 'Agent has no running gateway'),
  cloneNotImplemented: () => new HttpError(501, 'Agent cloning is not implemented'),
  sessionNotFound: () => new HttpError(404, 'Session not found'),
  unreachable: (id: string, health: string) => new HttpError(502, 'Agent unreachable: neither the runtime nor the agent gateway answered', undefined, { id, health }),
  gatewayUnavailable: () => new HttpError(502, 'Agent gateway unavailable'),
  noGatewayToken: () => new HttpError(404, 'Agent has no gateway token yet'),
  controlUiPathNotFound: () => new HttpError(404, 'Not found'),
  controlUiNotInstalled: () => new HttpError(503, 'Control UI is not available: this platform has no copy of the OpenClaw Control UI (CONTROL_UI_ROOT)'),
};

/** Whether `error` is AgentErrors.busy(): another operation on the agent held it too long. */
export const isAgentBusy = (error: unknown): boolean => error instanceof HttpError && error.code === AGENT_BUSY;

/** Every error of the workspace area (configuration, devices, workflows), with the spec's messages. */
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
  workflowLimit: (limit: number) => new HttpError(429, `Workflow limit reached: at most ${limit} per user; delete one first`, 'WORKFLOW_LIMIT', { limit }),
  invalidCursor: () => new HttpError(400, 'Invalid cursor: pass the nextCursor of the previous page', 'INVALID_CURSOR'),
  workflowNotFound: () => new HttpError(404, 'Workflow not found'),
  userNotFound: () => new HttpError(404, 'User not found'),
};
