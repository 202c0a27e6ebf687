import { randomUUID } from 'node:crypto';
import { IDENTITY_HEADER, signIdentity, type Identity } from '@agentyard/identity';

export type IdentityOverrides = Partial<Identity>;

/**
 * The header the edge would set for a caller, signed with this run's IDENTITY_SECRET, for
 * `app.inject()` tests of a single service. Defaults to an anonymous web caller.
 */
export function identityHeaders(overrides: IdentityOverrides = {}): Record<string, string> {
  const identity: Identity = {
    surface: 'web',
    auth: overrides.userId ? 'session' : 'none',
    userId: null,
    email: null,
    admin: false,
    sessionId: null,
    keyId: null,
    requestId: randomUUID(),
    ...overrides,
  };
  return { [IDENTITY_HEADER]: signIdentity(identity, process.env.IDENTITY_SECRET!) };
}
