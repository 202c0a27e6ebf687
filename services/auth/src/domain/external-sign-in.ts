import { randomUUID } from 'node:crypto';
import type { Keyring } from '@agentyard/crypto';
import { isUniqueViolation, sql, withUser, type AppDb, type UserTx } from '@agentyard/db';
import { SignInErrors } from '../errors.ts';
import { normalizeEmail } from './accounts.ts';
import { consumeInvite } from './invites.ts';

/** What an external provider (OAuth, wallet, farcaster) vouches for. */
export interface ExternalIdentity {
  provider: 'google' | 'github' | 'wallet' | 'farcaster';
  subject: string;
  /** The provider's address for the person (derived, for wallets). */
  email: string;
  /** The provider vouches the person holds `email` (OAuth); such an identity may join a verified account with that email. */
  emailVerified: boolean;
  name?: string | undefined;
  tokens?:
    | { accessToken?: string | undefined; refreshToken?: string | undefined; metadata?: Record<string, unknown> }
    | undefined;
}

interface Candidate {
  user_id: string;
  name: string;
  email: string;
  external_signin_disabled: boolean;
  linked: boolean;
  email_verified: boolean;
}

/** Who may get a new account: with `inviteRequired`, only a sign-in carrying an invite (`inviteTokenHash`), used up with the account. */
export interface NewAccountPolicy {
  inviteRequired: boolean;
  inviteTokenHash?: string | undefined;
}

/** The sealing context of a provider token, bound to the user and provider it belongs to. */
export const providerTokenContext = (userId: string, provider: string, kind: 'access' | 'refresh' | 'metadata') =>
  `provider-token:${provider}:${userId}:${kind}`;

function sealedTokens(keyring: Keyring, userId: string, identity: ExternalIdentity) {
  const tokens = identity.tokens;
  if (!tokens) return {};
  const seal = (value: string | undefined, kind: 'access' | 'refresh' | 'metadata') =>
    value === undefined ? undefined : keyring.encrypt(value, providerTokenContext(userId, identity.provider, kind));
  return {
    access_token_sealed: seal(tokens.accessToken, 'access'),
    refresh_token_sealed: seal(tokens.refreshToken, 'refresh'),
    token_metadata_sealed: seal(tokens.metadata ? JSON.stringify(tokens.metadata) : undefined, 'metadata'),
  };
}

async function link(
  trx: UserTx,
  keyring: Keyring,
  userId: string,
  identity: ExternalIdentity,
  linked: boolean,
): Promise<void> {
  const tokens = sealedTokens(keyring, userId, identity);
  if (linked) {
    if (Object.keys(tokens).length > 0) {
      await trx
        .updateTable('provider_accounts')
        .set({ ...tokens, updated_at: sql`now()` as unknown as Date })
        .where('provider', '=', identity.provider)
        .where('provider_subject', '=', identity.subject)
        .execute();
    }
    return;
  }
  // A user keeps the first account of a provider it linked ("unless the user already has one").
  await trx
    .insertInto('provider_accounts')
    .values({
      user_id: userId,
      provider: identity.provider,
      provider_subject: identity.subject,
      email: identity.email,
      ...tokens,
    })
    .onConflict((oc) => oc.columns(['user_id', 'provider']).doNothing())
    .execute();
}

/**
 * The user an external identity signs in as: the one already linked to it, else the one with its
 * email when both sides proved that address (then linked), else a new user (verified when the
 * provider vouched for the address; needing an invite when the policy says so). Refuses users
 * whose external sign-in is disabled, and an email match that is not proven on both sides: someone
 * who registered an address without proving it must not receive its owner's sign-in.
 */
export async function resolveExternalUser(
  db: AppDb,
  keyring: Keyring,
  identity: ExternalIdentity,
  policy: NewAccountPolicy,
): Promise<{ id: string; name: string; email: string }> {
  const email = normalizeEmail(identity.email);
  for (let attempt = 0; ; attempt++) {
    const { rows } =
      await sql<Candidate>`select * from auth_external_candidate(${identity.provider}, ${identity.subject}, ${email})`.execute(
        db,
      );
    const candidate = rows[0];
    if (candidate) {
      if (candidate.external_signin_disabled) throw SignInErrors.externalSignInDisabled();
      if (!candidate.linked) {
        // Wallet and farcaster addresses are derived, never proven mailboxes: they link by identity only.
        if (identity.provider === 'wallet' || identity.provider === 'farcaster') throw SignInErrors.walletEmailTaken();
        if (!candidate.email_verified || !identity.emailVerified) throw SignInErrors.unverifiedAccountEmail();
      }
      await withUser(db, candidate.user_id, (trx) => link(trx, keyring, candidate.user_id, identity, candidate.linked));
      return { id: candidate.user_id, name: candidate.name, email: candidate.email };
    }
    if (policy.inviteRequired && policy.inviteTokenHash === undefined) throw SignInErrors.inviteRequired();
    const id = randomUUID();
    const name = identity.name?.trim() || email;
    try {
      await withUser(db, id, async (trx) => {
        if (policy.inviteTokenHash !== undefined) await consumeInvite(trx, policy.inviteTokenHash);
        await trx
          .insertInto('users')
          .values({ id, email, name, email_verified_at: identity.emailVerified ? new Date() : null })
          .execute();
        await link(trx, keyring, id, identity, false);
      });
      return { id, name, email };
    } catch (error) {
      // Someone signed up with this email (or identity) meanwhile: look again, once.
      if (!isUniqueViolation(error) || attempt > 0) throw error;
    }
  }
}
