import { hashToken } from '@agentyard/crypto';

/** How long an accepted key counts as an agent's own, and how many the edge remembers. */
const KNOWN_FOR_MS = 10 * 60_000;
const MAX_KNOWN = 10_000;

/**
 * The agents' bearer keys a service accepted lately (their SHA-256, never the key), so agent-key
 * rate-limit scopes count a known key per agent and any other key (a random one costs nothing to
 * make) against the client's address: keys are checked by the service, the edge learns from its
 * answers. A key refused (401/403) is forgotten at once; the oldest go first beyond MAX_KNOWN.
 */
export class AgentKeys {
  readonly #known = new Map<string, number>();

  /** The key's hash when it is an agent's key the service accepted lately. */
  knownHash(authorization: string | undefined): string | undefined {
    const key = bearer(authorization);
    if (!key) return undefined;
    const hash = hashToken(key);
    const until = this.#known.get(hash);
    if (until === undefined) return undefined;
    if (until > Date.now()) return hash;
    this.#known.delete(hash);
    return undefined;
  }

  /** What the service answered a request carrying `authorization`. */
  learn(authorization: string | undefined, status: number): void {
    const key = bearer(authorization);
    if (!key) return;
    const hash = hashToken(key);
    this.#known.delete(hash);
    if (status === 401 || status === 403 || status >= 500) return;
    if (this.#known.size >= MAX_KNOWN) this.#known.delete(this.#known.keys().next().value!);
    this.#known.set(hash, Date.now() + KNOWN_FOR_MS);
  }
}

function bearer(authorization: string | undefined): string {
  return authorization?.startsWith('Bearer ') ? authorization.slice('Bearer '.length).trim() : '';
}

/** An agent's key as an `Authorization` value: its bearer, or the `x-api-key` Anthropic's clients send it as. */
export function agentAuthorization(headers: {
  authorization?: string;
  'x-api-key'?: string | string[];
}): string | undefined {
  const apiKey = headers['x-api-key'];
  return headers.authorization ?? (typeof apiKey === 'string' && apiKey ? `Bearer ${apiKey}` : undefined);
}
