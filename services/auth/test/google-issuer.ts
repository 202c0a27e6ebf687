import type { Test } from 'tap';
import { createServer } from 'node:http';
import { exportJWK, generateKeyPair } from 'jose';
import Provider, { interactionPolicy } from 'oidc-provider';

// A real OpenID provider standing in for Google in tests (Google sign-in and the log-secrets test).
export const CLIENT_ID = 'agentyard-web';
export const CLIENT_SECRET = 'a client secret for the local provider';
export const CALLBACK = `${process.env.PUBLIC_BASE_URL}/api/auth/google/callback`;

/** `emailVerified` is the issuer's `email_verified` claim (default true; null leaves the claim out). */
interface Account {
  email?: string;
  name: string;
  emailVerified?: boolean | null;
}

/**
 * A real OpenID provider (oidc-provider) on loopback. Its interaction page plays the person at the
 * account selector: it signs in as `next.account` and consents, or cancels when that is null.
 */
export async function startIssuer(t: Test) {
  const accounts = new Map<string, Account>();
  const next: { account: string | null } = { account: null };
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const policy = interactionPolicy.base();
  policy.add(new interactionPolicy.Prompt({ name: 'select_account', requestable: true }));
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
        redirect_uris: [CALLBACK],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_post',
      },
    ],
    jwks: { keys: [{ ...(await exportJWK(privateKey)), kid: 'k1', alg: 'RS256', use: 'sig' }] },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    findAccount: async (_ctx, sub) => {
      const account = accounts.get(sub);
      if (!account) return undefined;
      return {
        accountId: sub,
        claims: async () => ({
          sub,
          name: account.name,
          ...(account.email
            ? {
                email: account.email,
                ...(account.emailVerified === null ? {} : { email_verified: account.emailVerified ?? true }),
              }
            : {}),
        }),
      };
    },
    interactions: { policy, url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    issueRefreshToken: async () => true,
    features: { devInteractions: { enabled: false } },
    pkce: { required: () => true },
  });
  const callback = provider.callback();
  server.on('request', async (req, res) => {
    if (!req.url?.startsWith('/interaction/')) return callback(req, res);
    const details = await provider.interactionDetails(req, res);
    if (next.account === null)
      return provider.interactionFinished(
        req,
        res,
        { error: 'access_denied', error_description: 'the person cancelled' },
        { mergeWithLastSubmission: false },
      );
    const grant = new provider.Grant({ accountId: next.account, clientId: String(details.params.client_id) });
    grant.addOIDCScope(String(details.params.scope));
    const grantId = await grant.save();
    return provider.interactionFinished(
      req,
      res,
      { login: { accountId: next.account }, consent: { grantId }, select_account: {} },
      { mergeWithLastSubmission: false },
    );
  });
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { issuer, accounts, next };
}

/** A browser at the provider: follows redirects with the provider's cookies until it comes back to our callback. */
export async function browseToCallback(start: string): Promise<URL> {
  const jar = new Map<string, string>();
  let url = start;
  for (let hop = 0; hop < 20; hop++) {
    if (url.startsWith(CALLBACK)) return new URL(url);
    const res = await fetch(url, {
      redirect: 'manual',
      headers: { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') },
    });
    for (const cookie of res.headers.getSetCookie()) {
      const [pair] = cookie.split(';');
      const eq = pair!.indexOf('=');
      jar.set(pair!.slice(0, eq), pair!.slice(eq + 1));
    }
    const location = res.headers.get('location');
    if (!location) throw new Error(`provider stopped at ${url} with ${res.status}: ${await res.text()}`);
    url = new URL(location, url).href;
  }
  throw new Error('too many redirects');
}
