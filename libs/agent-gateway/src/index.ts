export { AGENT_ANSWER_LIMIT_BYTES, AGENT_GATEWAY_PORT, AgentGatewayError, type AgentProbe, HOOKS_PATH, type HooksTarget, probeAgent, readAgentAnswer, runAgentTurn, wakeAgent } from './client.ts';
export {
  AgentControlClient,
  AgentControlError,
  type ChannelAccountStatus,
  type AgentFile,
  type AgentFileMeta,
  CONTROL_FRAME_LIMIT_BYTES,
  type ControlMethod,
  type ControlMethods,
  type ControlTarget,
  callAdminRpc,
  controlUiDeviceSeed,
  deviceKeyOf,
  type OperatorSession,
  type OperatorSessionOptions,
  openOperatorSession,
  type PairedDevice,
  type PairingRequest,
  PROTOCOL_VERSION,
  platformDeviceSeed,
  type SkillStatus,
  withAgentControl,
} from './control-plane.ts';
export { type AgentSecretKind, openAgentSecret, sealAgentSecret } from './secrets.ts';
export { type GatewayToolTarget, invokeGatewayTool, readTurnOutcome, type TurnOutcome } from './session-turns.ts';
