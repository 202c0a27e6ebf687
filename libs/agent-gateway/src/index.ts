export { AGENT_GATEWAY_PORT, AGENT_ANSWER_LIMIT_BYTES, HOOKS_PATH, readAgentAnswer, runAgentTurn, wakeAgent, probeAgent, AgentGatewayError, type HooksTarget, type AgentProbe } from './client.ts';
export { sealAgentSecret, openAgentSecret, type AgentSecretKind } from './secrets.ts';
export {
  AgentControlClient,
  AgentControlError,
  callAdminRpc,
  controlUiDeviceSeed,
  deviceKeyOf,
  openOperatorSession,
  platformDeviceSeed,
  withAgentControl,
  type OperatorSession,
  type OperatorSessionOptions,
  PROTOCOL_VERSION,
  type ControlMethods,
  type ControlMethod,
  type ControlTarget,
  type AgentFile,
  type AgentFileMeta,
  type SkillStatus,
  type PairingRequest,
  type PairedDevice,
} from './control-plane.ts';
