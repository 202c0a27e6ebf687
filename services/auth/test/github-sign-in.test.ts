import t, { type Test } from 'tap';
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import { hashToken, parseKeyring } from '@agentyard/crypto';
import { sql } from '@agentyard/db';
import { appDb, createUserRow, identityHeaders, systemDb, uniqueEmail } from '@agentyard/testing';
import { build } from './helper.ts';
import { providerTokenContext } from '../src/domain/external-sign-in.ts';

const CLIENT_ID = 'agentyard-github-app';
const CLIENT_SECRET = 'a github client secret for the stand-in';
const CALLBACK = `${process.env.PUBLIC_BASE_URL}/api/auth/github/callback`;

interface GitHubAccount {
  id: number;
  login: string;
  name: string | null;
  emails: { email: string; primary: boolean; verified: boolean }[];
}

const readBody = async (req: IncomingMessage) => {
  let body = '';
  for await (const chunk of req) body += chunk;
  return body;
};

/**
 * A stand-in for GitHub on loopback speaking its OAuth web flow and REST API: the authorize page
 * plays the person (approves as `next.account`, or cancels when null), the token endpoint checks
 * the client secret, the code and its PKCE verifier, the API answers for the token it issued.
 */
async function startGitHub(t: Test) {
  const accounts = new Map<string, GitHubAccount>();
  const next: { account: string | null } = { account: null };
  const codes = new Map<string, { account: string; challenge: string; redirectUri: string }>();
  const tokens = new Map<string, string>();
  const delivered: { path: string; body?: Record<string, string>; authorization?: string | undefined }[] = [];
  const server = createServer(async (req, res) => {
    const url = new URL(req.url!, 'http://github.local');
    const json = (status: number, body: unknown) =>
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (req.method === 'GET' && url.pathname === '/login/oauth/authorize') {
      const p = url.searchParams;
      delivered.push({ path: url.pathname, body: Object.fromEntries(p) });
      if (p.get('client_id') !== CLIENT_ID || p.get('redirect_uri') !== CALLBACK)
        return json(400, { error: 'redirect_uri_mismatch' });
      const back = new URL(p.get('redirect_uri')!);
      back.searchParams.set('state', p.get('state')!);
      if (next.account === null) back.searchParams.set('error', 'access_denied');
      else {
        const code = randomBytes(10).toString('hex');
        codes.set(code, {
          account: next.account,
          challenge: p.get('code_challenge')!,
          redirectUri: p.get('redirect_uri')!,
        });
        back.searchParams.set('code', code);
      }
      return res.writeHead(302, { location: back.href }).end();
    }
    if (req.method === 'POST' && url.pathname === '/login/oauth/access_token') {
      const form = Object.fromEntries(new URLSearchParams(await readBody(req)));
      delivered.push({ path: url.pathname, body: form });
      const grant = codes.get(form.code ?? '');
      codes.delete(form.code ?? '');
      const verifierOk =
        grant &&
        createHash('sha256')
          .update(form.code_verifier ?? '')
          .digest('base64url') === grant.challenge;
      // GitHub answers 200 with an error field for a bad exchange.
      if (form.client_id !== CLIENT_ID || form.client_secret !== CLIENT_SECRET)
        return json(200, { error: 'incorrect_client_credentials' });
      if (!grant || !verifierOk || form.redirect_uri !== grant.redirectUri)
        return json(200, { error: 'bad_verification_code' });
      const accessToken = `gho_${randomBytes(18).toString('hex')}`;
      tokens.set(accessToken, grant.account);
      return json(200, { access_token: accessToken, token_type: 'bearer', scope: 'read:user,user:email' });
    }
    const account = accounts.get(tokens.get((req.headers.authorization ?? '').replace(/^Bearer /, '')) ?? '');
    delivered.push({ path: url.pathname, authorization: req.headers.authorization });
    if (!account) return json(401, { message: 'Bad credentials' });
    if (url.pathname === '/user') return json(200, { id: account.id, login: account.login, name: account.name });
    if (url.pathname === '/user/emails')
      return json(
        200,
        account.emails.map((e) => ({ ...e, visibility: null })),
      );
    return json(404, { message: 'Not Found' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return { base, accounts, next, delivered, tokens };
}

async function setup(t: Test, env: Record<string, string> = {}) {
  const github = await startGitHub(t);
  const app = await build(t, {
    GITHUB_CLIENT_ID: CLIENT_ID,
    GITHUB_CLIENT_SECRET: CLIENT_SECRET,
    GITHUB_BASE_URL: github.base,
    GITHUB_API_URL: github.base,
    ...env,
  });
  const get = (url: string, cookie?: string) =>
    app.inject({ method: 'GET', url, headers: { ...identityHeaders(), ...(cookie ? { cookie } : {}) } });
  /** As a browser: our redirect (keeping the binding cookie), GitHub's authorize page, back to our callback. */
  const signIn = async (
    account: string | null,
    cookieOf: (binding: string) => string | undefined = (b) => `agentyard-oauth=${b}`,
    query = '',
  ) => {
    github.next.account = account;
    const start = await get(`/api/auth/github${query}`);
    const binding = /^agentyard-oauth=([^;]+)/.exec(
      setCookies(start).find((c) => c.startsWith('agentyard-oauth=')) ?? '',
    )?.[1];
    const authorize = await fetch(start.headers.location as string, { redirect: 'manual' });
    const back = new URL(authorize.headers.get('location')!);
    if (!back.href.startsWith(CALLBACK)) throw new Error(`GitHub sent the browser to ${back.href}`);
    return get(`${back.pathname}${back.search}`, cookieOf(binding!));
  };
  return { app, github, get, signIn };
}

const setCookies = (res: { headers: Record<string, unknown> }) => [res.headers['set-cookie'] ?? []].flat().map(String);
const sessionCookie = (res: { headers: Record<string, unknown> }) =>
  /agentyard-session=([^;]+)/.exec(setCookies(res).join('\n'))?.[1];
async function cookieUser(token: string) {
  const { rows } = await sql<{ user_id: string }>`select * from auth_session_identity(${hashToken(token)})`.execute(
    appDb(),
  );
  return rows[0]?.user_id ?? null;
}

t.test(
  "the redirect goes to GitHub's authorize page with the client id, callback, scopes, state and PKCE",
  async (t) => {
    const { get, github } = await setup(t);
    const res = await get('/api/auth/github');
    t.equal(res.statusCode, 302);
    const location = new URL(res.headers.location as string);
    t.equal(`${location.origin}${location.pathname}`, `${github.base}/login/oauth/authorize`);
    const p = location.searchParams;
    t.same(
      [p.get('client_id'), p.get('redirect_uri'), p.get('scope'), p.get('code_challenge_method')],
      [CLIENT_ID, CALLBACK, 'read:user user:email', 'S256'],
    );
    t.match(p.get('state'), /^[A-Za-z0-9_-]{20,}$/);
    t.match(
      setCookies(res).join('\n'),
      /agentyard-oauth=[A-Za-z0-9_-]+; Max-Age=600; Path=\/api\/auth; HttpOnly; SameSite=Lax/,
    );
  },
);

t.test(
  'a new person signs in with GitHub: user from the verified primary email, token sealed, session, /dashboard',
  async (t) => {
    const { github, signIn } = await setup(t);
    const email = uniqueEmail('octo');
    github.accounts.set('octo', {
      id: 583231,
      login: 'octocat',
      name: 'The Octocat',
      emails: [
        { email: uniqueEmail('unverified'), primary: false, verified: false },
        { email, primary: true, verified: true },
      ],
    });
    const res = await signIn('octo');
    t.equal(res.statusCode, 302);
    t.equal(res.headers.location, '/dashboard');
    const userId = await cookieUser(sessionCookie(res)!);
    const user = await systemDb().selectFrom('users').selectAll().where('id', '=', userId!).executeTakeFirstOrThrow();
    t.same([user.email, user.name], [email.toLowerCase(), 'The Octocat']);
    const account = await systemDb()
      .selectFrom('provider_accounts')
      .selectAll()
      .where('user_id', '=', user.id)
      .executeTakeFirstOrThrow();
    t.same([account.provider, account.provider_subject], ['github', '583231']);
    const keyring = parseKeyring(process.env.ENCRYPTION_KEYS!);
    const access = keyring.decrypt(account.access_token_sealed!, providerTokenContext(user.id, 'github', 'access'));
    t.ok(github.tokens.has(access), 'the access token GitHub issued is kept');
    t.notOk(JSON.stringify(account).includes(access), 'never in clear');

    const exchange = github.delivered.find((d) => d.path === '/login/oauth/access_token')!;
    t.same(
      Object.keys(exchange.body!).sort(),
      ['client_id', 'client_secret', 'code', 'code_verifier', 'redirect_uri'],
      'the exchange carried the PKCE verifier',
    );
    t.ok(
      github.delivered.some((d) => d.path === '/user/emails' && d.authorization === `Bearer ${access}`),
      'emails read with the issued token',
    );
  },
);

t.test('an existing verified email is linked, not duplicated', async (t) => {
  const { app, github, signIn } = await setup(t);
  const email = uniqueEmail('gh-linked');
  const registered = (
    await app.inject({
      method: 'POST',
      url: '/api/register',
      headers: identityHeaders(),
      payload: { email, password: 'a good password' },
    })
  ).json();
  // Its holder opened the verification link.
  await systemDb()
    .updateTable('users')
    .set({ email_verified_at: new Date() })
    .where('id', '=', registered.id)
    .execute();
  github.accounts.set('linked', {
    id: 42,
    login: 'linked',
    name: null,
    emails: [{ email: email.toUpperCase(), primary: true, verified: true }],
  });
  for (let i = 0; i < 2; i++) t.equal(await cookieUser(sessionCookie(await signIn('linked'))!), registered.id);
  const links = await systemDb()
    .selectFrom('provider_accounts')
    .select('provider')
    .where('user_id', '=', registered.id)
    .execute();
  t.same(links, [{ provider: 'github' }]);
});

t.test(
  'failures: cancelled, no verified primary email, wrong secret, no or foreign binding cookie; no session',
  async (t) => {
    const { github, signIn } = await setup(t);
    const cancelled = await signIn(null);
    t.equal(cancelled.headers.location, '/login?error=AccessDenied');
    t.notOk(sessionCookie(cancelled));

    const unverified = uniqueEmail('gh-unverified');
    github.accounts.set('unverified', {
      id: 7,
      login: 'u',
      name: 'U',
      emails: [{ email: unverified, primary: true, verified: false }],
    });
    t.equal((await signIn('unverified')).headers.location, '/login?error=GitHubNoEmail');

    const email = uniqueEmail('gh-csrf');
    github.accounts.set('victim', { id: 8, login: 'v', name: 'V', emails: [{ email, primary: true, verified: true }] });
    const exchangesBefore = github.delivered.filter((d) => d.path === '/login/oauth/access_token').length;
    t.equal(
      (await signIn('victim', () => undefined)).headers.location,
      '/login?error=GitHubAuthFailed',
      'no binding cookie',
    );
    t.equal(
      (await signIn('victim', () => 'agentyard-oauth=another-browsers-binding')).headers.location,
      '/login?error=GitHubAuthFailed',
      "another browser's binding",
    );
    t.equal(
      github.delivered.filter((d) => d.path === '/login/oauth/access_token').length,
      exchangesBefore,
      'the code was never exchanged',
    );
    const users = await systemDb()
      .selectFrom('users')
      .select('id')
      .where(sql<boolean>`lower(email) in (${email.toLowerCase()}, ${unverified.toLowerCase()})`)
      .execute();
    t.equal(users.length, 0);
  },
);

t.test('a code GitHub will not exchange (wrong client secret): GitHubTokenFailed', async (t) => {
  const { github, signIn } = await setup(t, { GITHUB_CLIENT_SECRET: 'not the secret GitHub knows' });
  github.accounts.set('token', {
    id: 9,
    login: 't',
    name: 'T',
    emails: [{ email: uniqueEmail('gh-token'), primary: true, verified: true }],
  });
  const res = await signIn('token');
  t.equal(res.headers.location, '/login?error=GitHubTokenFailed');
  t.notOk(sessionCookie(res));
});

t.test(
  "account takeover: someone registers the victim's email unverified; the victim's GitHub sign-in does not land in that account",
  async (t) => {
    const { app, github, signIn } = await setup(t);
    const victim = uniqueEmail('gh-victim');
    const attacker = (
      await app.inject({
        method: 'POST',
        url: '/api/register',
        headers: identityHeaders(),
        payload: { email: victim, password: 'attacker password' },
      })
    ).json();
    github.accounts.set('gh-victim', {
      id: 77,
      login: 'victim',
      name: 'Victim',
      emails: [{ email: victim, primary: true, verified: true }],
    });
    const res = await signIn('gh-victim');
    t.equal(res.headers.location, '/login?error=EmailNotVerified');
    t.notOk(sessionCookie(res), "no session in the attacker's account");
    t.equal(
      (await systemDb().selectFrom('provider_accounts').select('id').where('user_id', '=', attacker.id).execute())
        .length,
      0,
      'nothing linked to it',
    );
  },
);

t.test('with INVITE_REQUIRED, GitHub creates an account only with an invite carried through the flow', async (t) => {
  const { app, github, signIn } = await setup(t, { INVITE_REQUIRED: 'true' });
  const creator = await createUserRow();
  const invite = (
    await app.inject({
      method: 'POST',
      url: '/api/invite',
      headers: identityHeaders({ userId: creator.id }),
      payload: { name: 'A Friend' },
    })
  ).json().token as string;
  const email = uniqueEmail('gh-gated');
  github.accounts.set('gated', {
    id: 78,
    login: 'gated',
    name: 'Gated',
    emails: [{ email, primary: true, verified: true }],
  });
  const refused = await signIn('gated');
  t.equal(refused.headers.location, '/login?error=InviteRequired');
  t.equal(
    (await systemDb().selectFrom('users').select('id').where('email', '=', email.toLowerCase()).execute()).length,
    0,
    'nobody created',
  );
  const admitted = await signIn('gated', undefined, `?inviteToken=${invite}`);
  t.equal(admitted.headers.location, '/dashboard');
  const userId = await cookieUser(sessionCookie(admitted)!);
  t.equal(
    (
      await systemDb()
        .selectFrom('invites')
        .select('used_by')
        .where('token_hash', '=', hashToken(invite))
        .executeTakeFirstOrThrow()
    ).used_by,
    userId,
  );
  t.equal((await signIn('gated')).headers.location, '/dashboard', 'an existing user needs no invite');
});
