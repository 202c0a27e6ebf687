import type { Keyring } from '@agentyard/crypto';

/** The per-agent secrets the platform keeps sealed (AES-256-GCM) in the agents table. */
export type AgentSecretKind = 'gateway-token' | 'hooks-token';

// The agent id and kind are bound into the ciphertext: a sealed token moved to another agent's
// row, or into the other column, does not open.
const context = (agentId: string, kind: AgentSecretKind) => `agent:${agentId}:${kind}`;

export function sealAgentSecret(keyring: Keyring, agentId: string, kind: AgentSecretKind, secret: string): string {
  return keyring.encrypt(secret, context(agentId, kind));
}

export function openAgentSecret(keyring: Keyring, agentId: string, kind: AgentSecretKind, sealed: string): string {
  return keyring.decrypt(sealed, context(agentId, kind));
}
