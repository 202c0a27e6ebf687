import { HttpError } from '@agentyard/http';

const AGENT_BUSY = 'AGENT_BUSY';

/** Every error the agents area answers with, named once. */
export const AgentErrors = {
  notFound: () => new HttpError(404, 'Agent not found'),
  invalidConfig: (message: string) => new HttpError(400, message),
  badName: () => new HttpError(400, 'Agent name must be 1 to 64 characters'),
  userContextRequired: () => new HttpError(401, 'User context required (x-user-id)'),
  subscriptionRequired: () => new HttpError(403, 'Active subscription required', 'SUBSCRIPTION_REQUIRED'),
  skillLimit: (limit: number) => new HttpError(429, `Skill limit reached for your plan (${limit})`, 'SKILL_LIMIT'),
  agentLimit: (limit: number) => new HttpError(429, `Agent limit reached for your plan (${limit})`, 'AGENT_LIMIT'),
  provisioningDisabled: () => new HttpError(503, 'Provisioning is temporarily disabled'),
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
  provisioningFailed: () => new HttpError(502, 'Provisioning failed on every path'),
};

/** Whether `error` is AgentErrors.busy(): another operation on the agent held it too long. */
export const isAgentBusy = (error: unknown): boolean => error instanceof HttpError && error.code === AGENT_BUSY;
