import { callAdminRpc, type ChannelAccountStatus } from '@agentyard/agent-gateway';
import type { Keyring } from '@agentyard/crypto';
import type { AgentRow } from '../agents/agent-views.ts';
import { runningAgentGateway } from './agent-gateway-access.ts';
import { SUPPORTED_CHANNELS, UNSUPPORTED_CHANNELS, type ChannelBinding } from './channel-vault.ts';

export type ChannelState = 'connected' | 'connecting' | 'error' | 'off';

export interface ChannelView {
  channel: string;
  enabled: boolean;
  status: ChannelState;
  detail: string;
  credentialHint: string;
  dmPolicy?: 'pairing' | 'allowlist' | 'open' | 'disabled';
  allowFrom?: string[];
}

/** What the gateway's own account status says, as one of the four states a person reads. */
export function stateOfAccount(account: ChannelAccountStatus | undefined): { status: ChannelState; detail: string } {
  if (!account) return { status: 'connecting', detail: 'the agent gateway has not started this channel yet' };
  if (account.lastError) return { status: 'error', detail: String(account.lastError).slice(0, 300) };
  if (account.enabled === false) return { status: 'off', detail: 'disabled in the agent gateway' };
  if (account.running === true && account.connected !== false)
    return { status: 'connected', detail: account.healthState ? `running (${account.healthState})` : 'running' };
  return {
    status: 'connecting',
    detail: account.stateReason ?? (account.running ? 'started, not connected yet' : 'starting'),
  };
}

/**
 * The agent's bindings with their live status, from the gateway's own `channels.status` (through
 * its admin RPC, the gateway token as bearer). A binding newer than the agent's container is not
 * applied yet (connecting); an agent that is not running has every channel off.
 */
export async function channelViews(
  agent: AgentRow,
  bindings: ChannelBinding[],
  keyring: Keyring,
  timeoutMs: number,
): Promise<ChannelView[]> {
  const settings = (b: ChannelBinding) => ({
    ...(b.settings.dmPolicy ? { dmPolicy: b.settings.dmPolicy } : {}),
    ...(b.settings.allowFrom ? { allowFrom: b.settings.allowFrom } : {}),
  });
  const view = (b: ChannelBinding, status: ChannelState, detail: string): ChannelView => ({
    channel: b.channel,
    enabled: b.enabled,
    status,
    detail,
    credentialHint: b.credentialHint,
    ...settings(b),
  });
  let accounts: Record<string, ChannelAccountStatus[]> | null = null;
  let unreachable = '';
  const live = bindings.filter((b) => b.enabled && SUPPORTED_CHANNELS[b.channel]);
  if (live.length > 0 && agent.status === 'running' && agent.gateway_url) {
    try {
      const answer = await callAdminRpc(
        runningAgentGateway(agent, keyring),
        'channels.status',
        { probe: false },
        timeoutMs,
      );
      accounts = answer.channelAccounts ?? {};
    } catch (error) {
      unreachable = `the agent gateway did not answer (${(error as Error).message})`.slice(0, 300);
    }
  }
  const started = agent.started_at ? new Date(agent.started_at).getTime() : 0;
  return bindings.map((b) => {
    if (!SUPPORTED_CHANNELS[b.channel])
      return view(b, 'off', UNSUPPORTED_CHANNELS[b.channel] ?? 'not supported on this platform');
    if (!b.enabled) return view(b, 'off', 'disabled by its owner');
    if (agent.status !== 'running') return view(b, 'off', `the agent is ${agent.status}`);
    if (b.updatedAt.getTime() > started) return view(b, 'connecting', 'applying the change to the agent');
    if (!accounts) return view(b, 'connecting', unreachable || 'waiting for the agent gateway');
    const list = accounts[b.channel] ?? [];
    const { status, detail } = stateOfAccount(list.find((a) => a.accountId === 'default') ?? list[0]);
    return view(b, status, detail);
  });
}
