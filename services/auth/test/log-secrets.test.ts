import t, { type Test } from 'tap';
import { Redis } from 'ioredis';
import pino from 'pino';
import { parseKeyring } from '@agentyard/crypto';
import { loggerOptions, type ServiceApp } from '@agentyard/http';
import { appDb, systemDb, uniqueEmail } from '@agentyard/testing';
import { buildApp as buildEdge } from '../../edge/src/app.ts';
import { loadEdgeConfig } from '../../edge/src/config.ts';
import { SCOPES } from '../../edge/src/plugins/rate-limits.ts';
import { buildApp, startWorkers } from '../src/app.ts';
import { loadAuthConfig } from '../src/config.ts';
import { providerTokenContext } from '../src/domain/external-sign-in.ts';
import { browseToCallback, CLIENT_ID, CLIENT_SECRET, startIssuer } from './google-issuer.ts';
import { isResetMail, isVerificationMail, startMailServer, tokenIn, verificationTokenIn } from './mail-server.ts';

// Every sign-in flow through a real edge in front of the auth service and its worker, all logging
// at trace level into memory: no secret a flow handles may appear in any line.
t.setTimeout(300_000); // many flows, each through edge, service, queue and mail: slow on a loaded machine

/** Log lines of one process, as pino writes them. */
function logSink() {
  const lines: string[] = [];
  return {
    lines,
    stream: {
      write: (line: string) => {
        lines.push(line);
      },
    },
  };
}

async function listen(t: Test, app: ServiceApp): Promise<string> {
  await app.listen({ host: '127.0.0.1', port: 0 });
  t.teardown(() => app.close());
  return `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
}

t.test(
  'no password, session token, API key, verification or reset token or OAuth code/token appears in any log line',
  async (t) => {
    const idp = await startIssuer(t);
    const mail = await startMailServer(t);
    const env = {
      ...process.env,
      LOG_LEVEL: 'trace',
      SMTP_URL: mail.url,
      GOOGLE_CLIENT_ID: CLIENT_ID,
      GOOGLE_CLIENT_SECRET: CLIENT_SECRET,
      GOOGLE_ISSUER: idp.issuer,
    };

    const authLog = logSink();
    const authConfig = loadAuthConfig(env);
    const auth = await buildApp(authConfig, { db: appDb(), systemDb: systemDb(), logStream: authLog.stream });
    const authUrl = await listen(t, auth);

    const workerLog = logSink();
    const workers = await startWorkers(authConfig, {
      systemDb: systemDb(),
      log: pino(loggerOptions('auth-worker', 'trace'), workerLog.stream),
    });
    await workers.email.waitUntilReady();
    t.teardown(() => workers.close());

    const edgeLog = logSink();
    const edgeConfig = loadEdgeConfig({
      ...env,
      RATE_LIMITS: SCOPES.map((scope) => `${scope.name}=1000000`).join(','),
    });
    const redis = new Redis(edgeConfig.REDIS_URL, { maxRetriesPerRequest: 1 });
    t.teardown(() => redis.disconnect());
    const edge = await buildEdge(edgeConfig, {
      db: appDb(),
      redis,
      health: { current: () => 'healthy' },
      upstreamOf: () => authUrl,
      logStream: edgeLog.stream,
    });
    t.teardown(() => edge.close());
    await edge.web.listen({ host: '127.0.0.1', port: 0 });
    const web = `http://127.0.0.1:${(edge.web.server.address() as { port: number }).port}`;

    const secrets = new Map<string, string>();
    const keep = (what: string, value: string | undefined | null) => {
      t.ok(value && value.length >= 8, `${what} was handled`);
      secrets.set(what, value!);
      return value!;
    };
    const origin = process.env.PUBLIC_BASE_URL!;
    const call = (method: string, path: string, options: { body?: object; cookie?: string; bearer?: string } = {}) =>
      fetch(`${web}${path}`, {
        method,
        redirect: 'manual',
        headers: {
          origin,
          ...(options.body ? { 'content-type': 'application/json' } : {}),
          ...(options.cookie ? { cookie: options.cookie } : {}),
          ...(options.bearer ? { authorization: `Bearer ${options.bearer}` } : {}),
        },
        ...(options.body ? { body: JSON.stringify(options.body) } : {}),
      });
    const cookieValue = (res: Response, name: string) =>
      res.headers
        .getSetCookie()
        .map((c) => c.split(';')[0]!)
        .find((c) => c.startsWith(`${name}=`))
        ?.slice(name.length + 1);

    // Email and password: register, sign in, a wrong password too.
    const email = uniqueEmail('logs');
    const password = keep('password', 'first password of the log test');
    const verificationMail = mail.nextMail(isVerificationMail);
    t.equal((await call('POST', '/api/register', { body: { email, password } })).status, 201);
    const verificationToken = keep('verification token', verificationTokenIn((await verificationMail).raw));
    t.equal((await call('POST', '/api/auth/verify-email', { body: { token: verificationToken } })).status, 200);
    t.equal(
      (
        await call('POST', '/api/auth/login', {
          body: { email, password: keep('wrong password', 'a wrong password for the log test') },
        })
      ).status,
      401,
    );
    const login = await call('POST', '/api/auth/login', { body: { email, password } });
    t.equal(login.status, 200);
    const session = keep('session token', cookieValue(login, 'agentyard-session'));
    const cookie = `agentyard-session=${session}`;

    // An API key: created, used as a bearer token, validated.
    const created = await call('POST', '/api/keys', { cookie, body: { name: 'log test' } });
    t.equal(created.status, 201);
    const apiKey = keep('API key', ((await created.json()) as { key: string }).key);
    t.match(
      await (await call('GET', '/api/auth/session', { bearer: apiKey })).json(),
      { user: { email: email.toLowerCase() } },
      'the key works at the edge',
    );
    t.same(await (await call('POST', '/api/keys/validate', { body: { key: apiKey } })).json(), { valid: true });
    t.equal((await call('POST', '/api/validate-key', { body: { key: apiKey } })).status, 200);

    // Password reset by mail.
    const delivered = mail.nextMail(isResetMail);
    t.equal((await call('POST', '/api/auth/forgot-password', { body: { email } })).status, 200);
    const resetToken = keep('reset token', tokenIn((await delivered).raw));
    const newPassword = keep('new password', 'second password of the log test');
    t.equal(
      (await call('POST', '/api/auth/reset-password', { body: { token: resetToken, password: newPassword } })).status,
      200,
    );
    const again = await call('POST', '/api/auth/login', { body: { email, password: newPassword } });
    keep('second session token', cookieValue(again, 'agentyard-session'));

    // Google sign-in, as a browser through the edge.
    const googleEmail = uniqueEmail('logs-google');
    idp.accounts.set('sub-logs', { email: googleEmail, name: 'Log Reader' });
    idp.next.account = 'sub-logs';
    const start = await call('GET', '/api/auth/google');
    const binding = keep('OAuth browser binding', cookieValue(start, 'agentyard-oauth'));
    const back = await browseToCallback(start.headers.get('location')!);
    keep('OAuth code', back.searchParams.get('code'));
    keep('OAuth state', back.searchParams.get('state'));
    const signedIn = await call('GET', `${back.pathname}${back.search}`, { cookie: `agentyard-oauth=${binding}` });
    t.equal(signedIn.headers.get('location'), '/dashboard', 'the binding cookie went through the edge');
    keep('Google session token', cookieValue(signedIn, 'agentyard-session'));
    const account = await systemDb()
      .selectFrom('provider_accounts')
      .innerJoin('users', 'users.id', 'provider_accounts.user_id')
      .select(['provider_accounts.user_id', 'access_token_sealed', 'refresh_token_sealed', 'token_metadata_sealed'])
      .where('users.email', '=', googleEmail.toLowerCase())
      .executeTakeFirstOrThrow();
    const keyring = parseKeyring(process.env.ENCRYPTION_KEYS!);
    keep(
      'OAuth access token',
      keyring.decrypt(account.access_token_sealed!, providerTokenContext(account.user_id, 'google', 'access')),
    );
    keep(
      'OAuth refresh token',
      keyring.decrypt(account.refresh_token_sealed!, providerTokenContext(account.user_id, 'google', 'refresh')),
    );
    keep(
      'OpenID id token',
      JSON.parse(
        keyring.decrypt(account.token_metadata_sealed!, providerTokenContext(account.user_id, 'google', 'metadata')),
      ).idToken,
    );

    t.equal((await call('POST', '/api/auth/signout', { cookie })).status, 200);
    await Promise.all([auth.close(), edge.close(), workers.close()]);

    const sources = { auth: authLog.lines, edge: edgeLog.lines, worker: workerLog.lines };
    t.ok(
      authLog.lines.some((l) => l.includes('/api/auth/google/callback')) &&
        edgeLog.lines.some((l) => l.includes('/api/auth/google/callback')),
      'the callback was logged by both the edge and auth (the capture works)',
    );
    t.ok(authLog.lines.length > 20 && edgeLog.lines.length > 20, 'trace-level logs were captured');
    for (const [source, lines] of Object.entries(sources)) {
      for (const [what, secret] of secrets) {
        const leaks = lines.filter((line) => line.includes(secret) || line.includes(encodeURIComponent(secret)));
        t.same(leaks, [], `${source} logs never show the ${what}`);
      }
    }
  },
);
