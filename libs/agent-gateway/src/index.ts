export { AGENT_GATEWAY_PORT, AGENT_ANSWER_LIMIT_BYTES, HOOKS_PATH, readAgentAnswer, runAgentTurn, wakeAgent, probeAgent, AgentGatewayError, type HooksTarget, type AgentProbe } from './client.ts';
export { sealAgentSecret, openAgentSecret, type AgentSecretKind } from './secrets.ts';
