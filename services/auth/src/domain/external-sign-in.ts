import { randomUUID } from 'node:crypto';
import type { Keyring } from '@agentyard/crypto';
import { isUniqueViolation, sql, withUser, type AppDb, type UserTx } from '@agentyard/db';
import { SignInErrors } from '../errors.ts';
import { normalizeEmail } from './accounts.ts';

/** What an external provider (OAuth, wallet, farcaster) vouches for. */
export interface ExternalIdentity {
  provider: 'google' | 'github' | 'wallet' | 'farcaster';
  subject: string;
  /** Verified by the provider (or derived, for wallets); links to the user with that email. */
  email: string;
  name?: string | undefined;
  tokens?: { accessToken?: string | undefined; refreshToken?: string | undefined; metadata?: Record<string, unknown> } | undefined;
}

interface Candidate { user_id: string; name: string; email: string; external_signin_disabled: boolean; linked: boolean }

/** The sealing context of a provider token, bound to the user and provider it belongs to. */
export const providerTokenContext = (userId: string, provider: string, kind: 'access' | 'refresh' | 'metadata') => `provider-token:${provider}:${userId}:${kind}`;

function sealedTokens(keyring: Keyring, userId: string, identity: ExternalIdentity) {
  const tokens = identity.tokens;
  if (!tokens) return {};
  const seal = (value: string | undefined, kind: 'access' | 'refresh' | 'metadata') => value === undefined ? undefined : keyring.encrypt(value, providerTokenContext(userId, identity.provider, kind));
  return {
    access_token_sealed: seal(tokens.accessToken, 'access'),
    refresh_token_sealed: seal(tokens.refreshToken, 'refresh'),
    token_metadata_sealed: seal(tokens.metadata ? JSON.stringify(tokens.metadata) : undefined, 'metadata'),
  };
}

async function link(trx: UserTx, keyring: Keyring, userId: string, identity: ExternalIdentity, linked: boolean): Promise<void> {
  const tokens = sealedTokens(keyring, userId, identity);
  if (linked) {
    if (Object.keys(tokens).length > 0) {
      await trx.updateTable('provider_accounts').set({ ...tokens, updated_at: sql`now()` as unknown as Date })
        .where('provider', '=', identity.provider).where('provider_subject', '=', identity.subject).execute();
    }
    return;
  }
  // A user keeps the first account of a provider it linked ("unless the user already has one").
  await trx.insertInto('provider_accounts')
    .values({ user_id: userId, provider: identity.provider, provider_subject: identity.subject, email: identity.email, ...tokens })
    .onConflict((oc) => oc.columns(['user_id', 'provider']).doNothing())
    .execute();
}

/**
 * The user an external identity signs in as: the one already linked to it, else the one with its
 * email (then linked), else a new user. Refuses users whose external sign-in is disabled.
 */
export async function resolveExternalUser(db: AppDb, keyring: Keyring, identity: ExternalIdentity): Promise<{ id: string; name: string; email: string }> {
  const email = normalizeEmail(identity.email);
  for (let attempt = 0; ; attempt++) {
    const { rows } = await sql<Candidate>`select * from auth_external_candidate(${identity.provider}, ${identity.subject}, ${email})`.execute(db);
    const candidate = rows[0];
    if (candidate) {
      if (candidate.external_signin_disabled) throw SignInErrors.externalSignInDisabled();
      await withUser(db, candidate.user_id, (trx) => link(trx, keyring, candidate.user_id, identity, candidate.linked));
      return { id: candidate.user_id, name: candidate.name, email: candidate.email };
    }
    const id = randomUUID();
    const name = identity.name?.trim() || email;
    try {
      await withUser(db, id, async (trx) => {
        await trx.insertInto('users').values({ id, email, name }).execute();
        await link(trx, keyring, id, identity, false);
      });
      return { id, name, email };
    } catch (error) {
      // Someone signed up with this email (or identity) meanwhile: look again, once.
      if (!isUniqueViolation(error) || attempt > 0) throw error;
    }
  }
}
