import { hashToken, randomToken, safeEqual, type Keyring } from '@agentyard/crypto';
import type { AppDb } from '@agentyard/db';

export const OAUTH_FLOW_TTL_SECONDS = 10 * 60;
const context = (provider: string) => `oauth-pkce:${provider}`;

/**
 * Remembers a flow's state (hashed), PKCE verifier (sealed) and the hash of an invite it carries
 * until its callback, tied to the browser that starts it: returns the random binding that browser
 * must hold (in a cookie).
 */
export async function rememberOAuthFlow(
  db: AppDb,
  keyring: Keyring,
  provider: string,
  flow: { state: string; codeVerifier: string; inviteTokenHash?: string | undefined },
): Promise<string> {
  const { state, codeVerifier } = flow;
  const binding = randomToken();
  await db.deleteFrom('oauth_states').where('expires_at', '<', new Date()).execute();
  await db
    .insertInto('oauth_states')
    .values({
      state_hash: hashToken(state),
      provider,
      code_verifier_sealed: keyring.encrypt(codeVerifier, context(provider)),
      browser_binding_hash: hashToken(binding),
      invite_token_hash: flow.inviteTokenHash ?? null,
      expires_at: new Date(Date.now() + OAUTH_FLOW_TTL_SECONDS * 1000),
    })
    .execute();
  return binding;
}

/**
 * The PKCE verifier (and invite) of a live flow with this state, when the calling browser holds
 * the flow's binding; else null. The state is used up either way: a callback replayed in another
 * browser (login CSRF) cannot be retried.
 */
export async function takeOAuthFlow(
  db: AppDb,
  keyring: Keyring,
  provider: string,
  state: string,
  binding: string | undefined,
): Promise<{ codeVerifier: string; inviteTokenHash: string | undefined } | null> {
  const row = await db
    .deleteFrom('oauth_states')
    .where('state_hash', '=', hashToken(state))
    .where('provider', '=', provider)
    .where('expires_at', '>', new Date())
    .returning(['code_verifier_sealed', 'browser_binding_hash', 'invite_token_hash'])
    .executeTakeFirst();
  if (!row || !binding || !safeEqual(hashToken(binding), row.browser_binding_hash)) return null;
  return {
    codeVerifier: keyring.decrypt(row.code_verifier_sealed, context(provider)),
    inviteTokenHash: row.invite_token_hash ?? undefined,
  };
}
