export { AGENT_GATEWAY_PORT, HOOKS_PATH, runAgentTurn, wakeAgent, probeAgent, AgentGatewayError, type HooksTarget, type AgentProbe } from './client.ts';
export { sealAgentSecret, openAgentSecret, type AgentSecretKind } from './secrets.ts';
