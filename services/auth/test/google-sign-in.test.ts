import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import t, { type Test } from 'tap';
import { parseKeyring, hashToken } from '@agentyard/crypto';
import { sql } from '@agentyard/db';
import { appDb, createUserRow, identityHeaders, systemDb, uniqueEmail } from '@agentyard/testing';
import { build } from './helper.ts';
import { browseToCallback, CALLBACK, CLIENT_ID, CLIENT_SECRET, startIssuer } from './google-issuer.ts';
import { providerTokenContext } from '../src/domain/external-sign-in.ts';

async function setup(t: Test, env: Record<string, string> = {}) {
  const idp = await startIssuer(t);
  const app = await build(t, {
    GOOGLE_CLIENT_ID: CLIENT_ID,
    GOOGLE_CLIENT_SECRET: CLIENT_SECRET,
    GOOGLE_ISSUER: idp.issuer,
    ...env,
  });
  const get = (url: string, cookie?: string) =>
    app.inject({ method: 'GET', url, headers: { ...identityHeaders(), ...(cookie ? { cookie } : {}) } });
  /** Our redirect and the binding cookie it hands the browser, then the provider, up to the way back to our callback. */
  const reachCallback = async (account: string | null) => {
    idp.next.account = account;
    const start = await get('/api/auth/google');
    const callback = await browseToCallback(start.headers.location as string);
    return { url: `${callback.pathname}${callback.search}`, binding: bindingCookie(start), start };
  };
  /** The whole sign-in as a browser does it, its cookie going back with it. */
  const signIn = async (account: string | null) => {
    const { url, binding } = await reachCallback(account);
    return get(url, `agentyard-oauth=${binding}`);
  };
  return { app, idp, get, reachCallback, signIn };
}

const setCookies = (res: { headers: Record<string, unknown> }) => [res.headers['set-cookie'] ?? []].flat().map(String);
const bindingCookie = (res: { headers: Record<string, unknown> }) =>
  /^agentyard-oauth=([^;]+)/.exec(setCookies(res).find((c) => c.startsWith('agentyard-oauth=')) ?? '')?.[1];

const sessionCookie = (res: { headers: Record<string, unknown> }) =>
  /agentyard-session=([^;]+)/.exec(setCookies(res).join('\n'))?.[1];
async function cookieWorks(token: string) {
  const { rows } = await sql<{ user_id: string }>`select * from auth_session_identity(${hashToken(token)})`.execute(
    appDb(),
  );
  return rows[0]?.user_id ?? null;
}

t.test(
  'the redirect asks for openid email profile, offline access, the account selector, state and PKCE',
  async (t) => {
    const { get, idp } = await setup(t);
    const res = await get('/api/auth/google');
    t.equal(res.statusCode, 302);
    const location = new URL(res.headers.location as string);
    t.equal(location.origin, idp.issuer);
    const p = location.searchParams;
    t.same(
      [
        p.get('client_id'),
        p.get('redirect_uri'),
        p.get('scope'),
        p.get('access_type'),
        p.get('prompt'),
        p.get('response_type'),
        p.get('code_challenge_method'),
      ],
      [CLIENT_ID, CALLBACK, 'openid email profile', 'offline', 'select_account', 'code', 'S256'],
    );
    t.match(p.get('state'), /^[A-Za-z0-9_-]{20,}$/);
    t.match(p.get('code_challenge'), /^[A-Za-z0-9_-]{43}$/);
    const stored = await systemDb()
      .selectFrom('oauth_states')
      .selectAll()
      .where('state_hash', '=', hashToken(p.get('state')!))
      .executeTakeFirstOrThrow();
    t.match(stored.code_verifier_sealed, /^v1\./, 'the PKCE verifier is kept sealed');
  },
);

t.test(
  'a new person signs in: user created, provider tokens stored encrypted, session cookie, /dashboard',
  async (t) => {
    const { idp, signIn } = await setup(t);
    const email = uniqueEmail('google');
    idp.accounts.set('sub-new', { email, name: 'Grace Hopper' });
    const res = await signIn('sub-new');
    t.equal(res.statusCode, 302);
    t.equal(res.headers.location, '/dashboard');
    const token = sessionCookie(res);
    t.ok(token, 'session cookie set');
    const userId = await cookieWorks(token!);
    const user = await systemDb().selectFrom('users').selectAll().where('id', '=', userId!).executeTakeFirstOrThrow();
    t.same([user.email, user.name, user.password_hash], [email.toLowerCase(), 'Grace Hopper', null]);
    const account = await systemDb()
      .selectFrom('provider_accounts')
      .selectAll()
      .where('user_id', '=', user.id)
      .executeTakeFirstOrThrow();
    t.same([account.provider, account.provider_subject], ['google', 'sub-new']);
    const keyring = parseKeyring(process.env.ENCRYPTION_KEYS!);
    const access = keyring.decrypt(account.access_token_sealed!, providerTokenContext(user.id, 'google', 'access'));
    const refresh = keyring.decrypt(account.refresh_token_sealed!, providerTokenContext(user.id, 'google', 'refresh'));
    t.ok(access.length > 10 && refresh.length > 10, 'access and refresh tokens kept');
    t.notOk(JSON.stringify(account).includes(access) || JSON.stringify(account).includes(refresh), 'never in clear');
    t.match(
      JSON.parse(keyring.decrypt(account.token_metadata_sealed!, providerTokenContext(user.id, 'google', 'metadata'))),
      { tokenType: /bearer/i, expiresAt: String },
    );
  },
);

t.test('an existing verified email is linked, not duplicated; a second sign-in reuses the link', async (t) => {
  const { app, idp, signIn } = await setup(t);
  const email = uniqueEmail('linked');
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
  idp.accounts.set('sub-linked', { email: email.toUpperCase(), name: 'Someone Else' });
  for (let i = 0; i < 2; i++) {
    const res = await signIn('sub-linked');
    t.equal(res.headers.location, '/dashboard');
    t.equal(await cookieWorks(sessionCookie(res)!), registered.id);
  }
  const links = await systemDb()
    .selectFrom('provider_accounts')
    .select('id')
    .where('user_id', '=', registered.id)
    .execute();
  t.equal(links.length, 1);
  const users = await systemDb()
    .selectFrom('users')
    .select('id')
    .where(sql<boolean>`lower(email) = ${email.toLowerCase()}`)
    .execute();
  t.equal(users.length, 1);
});

t.test("failures redirect to /login with the interface's reasons and create no session", async (t) => {
  const { idp, get, signIn } = await setup(t);

  const cancelled = await signIn(null);
  t.equal(cancelled.headers.location, '/login?error=AccessDenied', 'the person cancelled at the provider');
  t.notOk(sessionCookie(cancelled));

  const other = await get('/api/auth/google/callback?error=server_error&code=would-not-be-used&state=x');
  t.equal(other.headers.location, '/login?error=GoogleAuthFailed', 'a provider error never exchanges the code');
  t.equal((await get('/api/auth/google/callback')).headers.location, '/login?error=GoogleAuthFailed', 'no code');
  t.equal(
    (await get('/api/auth/google/callback?code=abc&state=never-issued')).headers.location,
    '/login?error=GoogleAuthFailed',
    'unknown state',
  );

  idp.accounts.set('sub-noemail', { name: 'No Email' });
  t.equal((await signIn('sub-noemail')).headers.location, '/login?error=GoogleNoEmail');

  const email = uniqueEmail('disabled');
  idp.accounts.set('sub-disabled', { email, name: 'Disabled' });
  await systemDb().insertInto('users').values({ email, name: 'Disabled', external_signin_disabled: true }).execute();
  const refused = await signIn('sub-disabled');
  t.equal(
    refused.headers.location,
    '/login?error=AccountDisabled',
    'a user whose external sign-in is disabled is refused',
  );
  t.notOk(sessionCookie(refused));
});

t.test('a code the provider will not exchange: GoogleTokenFailed', async (t) => {
  const { idp, signIn } = await setup(t, { GOOGLE_CLIENT_SECRET: 'not the secret the provider knows' });
  idp.accounts.set('sub-token', { email: uniqueEmail('token'), name: 'T' });
  t.equal((await signIn('sub-token')).headers.location, '/login?error=GoogleTokenFailed');
});

t.test('a provider that cannot be reached: GoogleAuthError', async (t) => {
  const unreachable = await new Promise<string>((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(`http://127.0.0.1:${port}`));
    });
  });
  const app = await build(t, {
    GOOGLE_CLIENT_ID: CLIENT_ID,
    GOOGLE_CLIENT_SECRET: CLIENT_SECRET,
    GOOGLE_ISSUER: unreachable,
  });
  const res = await app.inject({ method: 'GET', url: '/api/auth/google', headers: identityHeaders() });
  t.equal(res.statusCode, 302);
  t.equal(res.headers.location, '/login?error=GoogleAuthError');
  t.notOk(bindingCookie(res), 'no flow is remembered');
});

t.test('without a client id both routes redirect to GoogleNotConfigured', async (t) => {
  const app = await build(t, { GOOGLE_CLIENT_ID: '', GOOGLE_CLIENT_SECRET: '' });
  for (const url of ['/api/auth/google', '/api/auth/google/callback?code=x&state=y']) {
    const res = await app.inject({ method: 'GET', url, headers: identityHeaders() });
    t.equal(res.statusCode, 302);
    t.equal(res.headers.location, '/login?error=GoogleNotConfigured');
  }
  const github = await app.inject({ method: 'GET', url: '/api/auth/github', headers: identityHeaders() });
  t.equal(github.headers.location, '/login?error=GitHubNotConfigured');
});

t.test(
  'the flow is tied to the browser that started it: a cookie holds a binding stored hashed with the state',
  async (t) => {
    const { get, idp, reachCallback } = await setup(t);
    const start = await get('/api/auth/google');
    const cookie = setCookies(start).find((c) => c.startsWith('agentyard-oauth='))!;
    t.match(
      cookie,
      /^agentyard-oauth=[A-Za-z0-9_-]{40,}; Max-Age=600; Path=\/api\/auth; HttpOnly; SameSite=Lax$/,
      'short-lived, HttpOnly, Lax, only under /api/auth (no Secure over http)',
    );
    const state = new URL(start.headers.location as string).searchParams.get('state')!;
    const stored = await systemDb()
      .selectFrom('oauth_states')
      .selectAll()
      .where('state_hash', '=', hashToken(state))
      .executeTakeFirstOrThrow();
    t.equal(stored.browser_binding_hash, hashToken(bindingCookie(start)!), 'stored hashed, never in clear');

    const email = uniqueEmail('csrf');
    idp.accounts.set('sub-csrf', { email, name: 'Victim' });
    for (const [what, cookieHeader] of [
      ['no cookie', undefined],
      ["another browser's binding", 'agentyard-oauth=someone-elses-binding-value-0123456789abcdef'],
    ] as const) {
      const { url } = await reachCallback('sub-csrf');
      const res = await get(url, cookieHeader);
      t.equal(res.headers.location, '/login?error=GoogleAuthFailed', what);
      t.notOk(sessionCookie(res), `${what}: no session`);
      t.ok(
        setCookies(res).some((c) => /^agentyard-oauth=; Max-Age=0; Path=\/api\/auth/.test(c)),
        `${what}: the binding cookie is cleared`,
      );
    }
    const users = await systemDb().selectFrom('users').select('id').where('email', '=', email.toLowerCase()).execute();
    t.equal(users.length, 0, 'nobody was signed in or created');

    const { url, binding } = await reachCallback('sub-csrf');
    const replayed = await get(url, 'agentyard-oauth=wrong');
    t.equal(replayed.headers.location, '/login?error=GoogleAuthFailed');
    const retried = await get(url, `agentyard-oauth=${binding}`);
    t.equal(
      retried.headers.location,
      '/login?error=GoogleAuthFailed',
      'a refused callback used the state up: it cannot be retried',
    );
  },
);

t.test('a successful callback clears the binding cookie and sets the session cookie', async (t) => {
  const { idp, signIn } = await setup(t);
  idp.accounts.set('sub-clear', { email: uniqueEmail('clear'), name: 'C' });
  const res = await signIn('sub-clear');
  t.equal(res.headers.location, '/dashboard');
  t.ok(sessionCookie(res));
  t.ok(setCookies(res).some((c) => c.startsWith('agentyard-oauth=; Max-Age=0')));
});

t.test(
  "account takeover: someone registers the victim's email unverified; the victim's Google sign-in does not land in that account",
  async (t) => {
    const { app, idp, signIn } = await setup(t);
    const victim = uniqueEmail('victim');
    const attacker = (
      await app.inject({
        method: 'POST',
        url: '/api/register',
        headers: identityHeaders(),
        payload: { email: victim, password: 'attacker password' },
      })
    ).json();
    idp.accounts.set('sub-victim', { email: victim, name: 'Victim' });
    const res = await signIn('sub-victim');
    t.equal(res.headers.location, '/login?error=EmailNotVerified', 'refused with a reason the console explains');
    t.notOk(sessionCookie(res), "no session in the attacker's account");
    t.equal(
      (await systemDb().selectFrom('provider_accounts').select('id').where('user_id', '=', attacker.id).execute())
        .length,
      0,
      "the victim's Google identity is not linked to it",
    );
    const users = await systemDb()
      .selectFrom('users')
      .select('id')
      .where(sql<boolean>`lower(email) = ${victim.toLowerCase()}`)
      .execute();
    t.same(
      users.map((u) => u.id),
      [attacker.id],
      'and no second account with that address',
    );
  },
);

t.test('a Google profile whose address the issuer does not say it verified is refused (absent or false)', async (t) => {
  const { idp, signIn } = await setup(t);
  for (const [name, emailVerified] of [
    ['claim absent', null],
    ['claim false', false],
  ] as const) {
    const email = uniqueEmail('unverified-google');
    idp.accounts.set(`sub-${name}`, { email, name, emailVerified });
    const res = await signIn(`sub-${name}`);
    t.equal(res.headers.location, '/login?error=GoogleEmailNotVerified', name);
    t.notOk(sessionCookie(res), name);
    t.equal(
      (await systemDb().selectFrom('users').select('id').where('email', '=', email.toLowerCase()).execute()).length,
      0,
      `${name}: nobody created`,
    );
  }
});

t.test('a user Google creates has a verified address', async (t) => {
  const { app, idp, signIn } = await setup(t);
  idp.accounts.set('sub-fresh', { email: uniqueEmail('fresh'), name: 'Fresh' });
  const userId = await cookieWorks(sessionCookie(await signIn('sub-fresh'))!);
  const session = await app.inject({
    method: 'GET',
    url: '/api/auth/session',
    headers: identityHeaders({ userId: userId!, auth: 'session' }),
  });
  t.equal(session.json().user.emailVerified, true);
});

t.test(
  'with INVITE_REQUIRED, Google creates an account only with an invite carried through the flow; existing users still sign in',
  async (t) => {
    const { app, idp, get } = await setup(t, { INVITE_REQUIRED: 'true' });
    const creator = await createUserRow();
    const invite = (
      await app.inject({
        method: 'POST',
        url: '/api/invite',
        headers: identityHeaders({ userId: creator.id }),
        payload: { name: 'A Friend' },
      })
    ).json().token as string;
    const signInWith = async (account: string, query = '') => {
      idp.next.account = account;
      const start = await get(`/api/auth/google${query}`);
      const callback = await browseToCallback(start.headers.location as string);
      return get(`${callback.pathname}${callback.search}`, `agentyard-oauth=${bindingCookie(start)}`);
    };
    const email = uniqueEmail('gated');
    idp.accounts.set('sub-gated', { email, name: 'Gated' });
    const refused = await signInWith('sub-gated');
    t.equal(refused.headers.location, '/login?error=InviteRequired');
    t.notOk(sessionCookie(refused));
    t.equal(
      (await systemDb().selectFrom('users').select('id').where('email', '=', email.toLowerCase()).execute()).length,
      0,
      'nobody created',
    );

    const bad = await get('/api/auth/google?inviteToken=not-an-invite');
    t.equal(bad.statusCode, 400, 'a malformed invite is bad input');

    const admitted = await signInWith('sub-gated', `?inviteToken=${invite}`);
    t.equal(admitted.headers.location, '/dashboard');
    const userId = await cookieWorks(sessionCookie(admitted)!);
    const row = await systemDb()
      .selectFrom('invites')
      .select(['used_by'])
      .where('token_hash', '=', hashToken(invite))
      .executeTakeFirstOrThrow();
    t.equal(row.used_by, userId, 'the invite went to the new account');

    idp.accounts.set('sub-gated-2', { email: uniqueEmail('gated-2'), name: 'Second' });
    t.equal(
      (await signInWith('sub-gated-2', `?inviteToken=${invite}`)).headers.location,
      '/login?error=InviteUsed',
      'a used invite admits nobody else',
    );
    t.equal((await signInWith('sub-gated')).headers.location, '/dashboard', 'an existing user needs no invite');
  },
);
