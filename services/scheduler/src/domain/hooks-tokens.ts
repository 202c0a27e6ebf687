import type { Keyring } from '@agentyard/crypto';
import { openAgentSecret, type GatewayToolTarget, type HooksTarget } from '@agentyard/agent-gateway';
import { UnrecoverableError } from '@agentyard/queue';

/**
 * Opens agents' sealed hooks tokens, each ciphertext once: every firing of every task of an agent
 * carries the same one. Bounded: the oldest entry goes first. A rotated token is a new ciphertext.
 */
export function hooksTokens(keyring: Keyring, capacity = 10_000) {
  const opened = new Map<string, string>();
  return {
    target(agent: { id: string; gateway_url: string | null; hooks_token_sealed: string | null }): HooksTarget {
      if (!agent.gateway_url || !agent.hooks_token_sealed)
        throw new UnrecoverableError('agent has no hooks endpoint on record');
      const key = `${agent.id}\u0000${agent.hooks_token_sealed}`;
      let token = opened.get(key);
      if (token === undefined) {
        token = openAgentSecret(keyring, agent.id, 'hooks-token', agent.hooks_token_sealed);
        if (opened.size >= capacity) opened.delete(opened.keys().next().value!);
        opened.set(key, token);
      }
      return { baseUrl: agent.gateway_url, hooksToken: token };
    },
    /** The agent's gateway token, for reading how a turn ended (its transcript): opened when asked, not kept. */
    gateway(agent: { id: string; gateway_url: string | null; gateway_token_sealed: string | null }): GatewayToolTarget {
      if (!agent.gateway_url || !agent.gateway_token_sealed)
        throw new UnrecoverableError('agent has no gateway on record');
      return {
        baseUrl: agent.gateway_url,
        gatewayToken: openAgentSecret(keyring, agent.id, 'gateway-token', agent.gateway_token_sealed),
      };
    },
  };
}

export type HooksTokens = ReturnType<typeof hooksTokens>;
