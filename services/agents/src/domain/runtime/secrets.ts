import { openAgentSecret, sealAgentSecret } from '@agentyard/agent-gateway';
import { randomToken, type Keyring } from '@agentyard/crypto';
import type { Database, Kysely } from '@agentyard/db';
import type { AgentRow } from '../agents/agent-views.ts';
import { openedChannels, type OpenedChannel } from '../gateway/channel-vault.ts';

/**
 * The agent's own secrets: made once, kept sealed in its row (new ones are stored with the first
 * container that uses them); the AI key is new for each container.
 */
export interface AgentSecrets {
  gatewayToken: string;
  hooksToken: string;
  aiKey: string;
  /** The agent's channel bindings with their credentials opened (written as files on its state disk, never into its config). */
  channels: OpenedChannel[];
  /** Sealed forms of tokens made just now, for the row. */
  sealed?: { gateway_token_sealed: string; hooks_token_sealed: string };
}

/** The secrets a new container of `agent` is given: its stored tokens opened, or new ones. */
export async function agentSecrets(db: Kysely<Database>, keyring: Keyring, agent: AgentRow): Promise<AgentSecrets> {
  return { ...agentTokens(keyring, agent), channels: await openedChannels(db, keyring, agent.id) };
}

function agentTokens(keyring: Keyring, agent: AgentRow): Omit<AgentSecrets, 'channels'> {
  const aiKey = `ag_${randomToken()}`;
  if (agent.gateway_token_sealed && agent.hooks_token_sealed) {
    return {
      gatewayToken: openAgentSecret(keyring, agent.id, 'gateway-token', agent.gateway_token_sealed),
      hooksToken: openAgentSecret(keyring, agent.id, 'hooks-token', agent.hooks_token_sealed),
      aiKey,
    };
  }
  const gatewayToken = randomToken();
  const hooksToken = randomToken();
  const sealed = {
    gateway_token_sealed: sealAgentSecret(keyring, agent.id, 'gateway-token', gatewayToken),
    hooks_token_sealed: sealAgentSecret(keyring, agent.id, 'hooks-token', hooksToken),
  };
  return { gatewayToken, hooksToken, aiKey, sealed };
}
