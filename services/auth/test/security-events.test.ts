import t, { type Test } from 'tap';
import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { sql } from '@agentyard/db';
import { hashToken, randomToken } from '@agentyard/crypto';
import { appDb, createUserRow, identityHeaders, systemDb } from '@agentyard/testing';
import { build, startWorkers } from './helper.ts';
import type { AuthWorkers } from '../src/workers.ts';

const CLIENT_ID = 'agentyard-test.apps.googleusercontent.com';
const RISC = 'https://schemas.openid.net/secevent/risc/event-type/';
const TOKENS_REVOKED = 'https://schemas.openid.net/secevent/oauth/event-type/tokens-revoked';

interface SigningKey {
  kid: string;
  privateKey: CryptoKey;
  jwk: JWK;
}
async function newKey(): Promise<SigningKey> {
  const { publicKey, privateKey } = await generateKeyPair('RS256');
  const kid = randomUUID();
  return { kid, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' } };
}

/** A security event transmitter on loopback: its discovery document and key set (which tests rotate). */
async function startTransmitter(t: Test) {
  const keys: SigningKey[] = [await newKey()];
  let keySetFetches = 0;
  const server = createServer((req, res) => {
    const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    res.setHeader('content-type', 'application/json');
    if (req.url === '/.well-known/risc-configuration')
      return res.end(JSON.stringify({ issuer: base, jwks_uri: `${base}/jwks` }));
    if (req.url === '/jwks') {
      keySetFetches++;
      return res.end(JSON.stringify({ keys: keys.map((k) => k.jwk) }));
    }
    res.statusCode = 404;
    res.end('{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const issuer = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return {
    issuer,
    keys,
    fetches: () => keySetFetches,
    async sign(
      events: Record<string, object>,
      options: { aud?: string; iss?: string; jti?: string; key?: SigningKey } = {},
    ) {
      const key = options.key ?? keys[0]!;
      return new SignJWT({ events })
        .setProtectedHeader({ alg: 'RS256', kid: key.kid, typ: 'secevent+jwt' })
        .setIssuer(options.iss ?? issuer)
        .setAudience(options.aud ?? CLIENT_ID)
        .setJti(options.jti ?? randomUUID())
        .setIssuedAt()
        .sign(key.privateKey);
    },
  };
}

/** The next security event job the worker finishes, with what it did. */
function nextApplied(workers: AuthWorkers): Promise<Record<string, Record<string, unknown>> | null> {
  return new Promise((resolve, reject) => {
    workers.securityEvents.once('completed', (_job, result) => resolve(result as never));
    workers.securityEvents.once('failed', (_job, error) => reject(error));
  });
}

/** What the edge sees for a session cookie on the next request (it runs exactly this lookup). */
async function cookieWorks(token: string): Promise<boolean> {
  const { rows } = await sql`select * from auth_session_identity(${hashToken(token)})`.execute(appDb());
  return rows.length === 1;
}

async function userWithSession(googleSub?: string) {
  const user = await createUserRow();
  const token = randomToken();
  await systemDb()
    .insertInto('sessions')
    .values({ user_id: user.id, token_hash: hashToken(token), expires_at: new Date(Date.now() + 3600_000) })
    .execute();
  if (googleSub) {
    await systemDb()
      .insertInto('provider_accounts')
      .values({
        user_id: user.id,
        provider: 'google',
        provider_subject: googleSub,
        email: user.email,
        access_token_sealed: 'v1.k.a.b.c',
        refresh_token_sealed: 'v1.k.a.b.c',
        token_metadata_sealed: 'v1.k.a.b.c',
      })
      .execute();
  }
  return { ...user, token };
}

async function setup(t: Test, env: Record<string, string> = {}) {
  const transmitter = await startTransmitter(t);
  const config = {
    GOOGLE_CLIENT_ID: CLIENT_ID,
    GOOGLE_CLIENT_SECRET: 'test-secret',
    GOOGLE_RISC_CONFIGURATION_URL: `${transmitter.issuer}/.well-known/risc-configuration`,
    ...env,
  };
  const app = await build(t, config);
  const workers = await startWorkers(t, config);
  const deliver = (token: string, url = '/api/security/risc') =>
    app.inject({
      method: 'POST',
      url,
      headers: { ...identityHeaders(), 'content-type': 'application/secevent+jwt' },
      payload: token,
    });
  return { app, workers, transmitter, deliver };
}

t.test(
  'account-disabled (hijacking): 202 empty, then external sign-in is off and the cookie stops working',
  async (t) => {
    const { workers, transmitter, deliver } = await setup(t);
    const sub = `google-${randomUUID()}`;
    const victim = await userWithSession(sub);
    const bystander = await userWithSession(`google-${randomUUID()}`);
    t.ok(await cookieWorks(victim.token));

    const applied = nextApplied(workers);
    const res = await deliver(
      await transmitter.sign({
        [`${RISC}account-disabled`]: {
          subject: { subject_type: 'iss-sub', iss: transmitter.issuer, sub },
          reason: 'hijacking',
        },
      }),
    );
    t.equal(res.statusCode, 202);
    t.equal(res.body, '', 'empty body');
    t.match(await applied, {
      [`${RISC}account-disabled`]: { users: 1, externalSignInDisabled: true, sessionsEnded: 1 },
    });

    t.notOk(await cookieWorks(victim.token), "the victim's cookie no longer resolves");
    const row = await systemDb()
      .selectFrom('users')
      .select('external_signin_disabled')
      .where('id', '=', victim.id)
      .executeTakeFirstOrThrow();
    t.equal(row.external_signin_disabled, true);
    t.ok(await cookieWorks(bystander.token), 'other users are untouched');
  },
);

t.test(
  'account-disabled for another reason ends sessions but keeps external sign-in; account-enabled re-enables',
  async (t) => {
    const { workers, transmitter, deliver } = await setup(t);
    const user = await userWithSession();
    await systemDb().updateTable('users').set({ external_signin_disabled: true }).where('id', '=', user.id).execute();
    let applied = nextApplied(workers);
    t.equal(
      (
        await deliver(
          await transmitter.sign({
            [`${RISC}account-disabled`]: {
              subject: { subject_type: 'email', email: user.email.toUpperCase() },
              reason: 'bulk-account',
            },
          }),
        )
      ).statusCode,
      202,
    );
    t.match(await applied, { [`${RISC}account-disabled`]: { users: 1, sessionsEnded: 1 } });
    t.notOk(await cookieWorks(user.token));

    applied = nextApplied(workers);
    t.equal(
      (
        await deliver(
          await transmitter.sign({
            [`${RISC}account-enabled`]: { subject: { subject_type: 'email', email: user.email } },
          }),
        )
      ).statusCode,
      202,
    );
    await applied;
    const row = await systemDb()
      .selectFrom('users')
      .select('external_signin_disabled')
      .where('id', '=', user.id)
      .executeTakeFirstOrThrow();
    t.equal(row.external_signin_disabled, false);
  },
);

t.test(
  'sessions-revoked ends sessions; tokens-revoked (oauth namespace) deletes stored provider tokens; other kinds are recorded',
  async (t) => {
    const { workers, transmitter, deliver } = await setup(t);
    const sub = `google-${randomUUID()}`;
    const user = await userWithSession(sub);
    let applied = nextApplied(workers);
    await deliver(
      await transmitter.sign({
        [`${RISC}sessions-revoked`]: { subject: { subject_type: 'iss-sub', iss: transmitter.issuer, sub } },
      }),
    );
    t.match(await applied, { [`${RISC}sessions-revoked`]: { users: 1, sessionsEnded: 1 } });
    t.notOk(await cookieWorks(user.token));

    applied = nextApplied(workers);
    await deliver(
      await transmitter.sign({
        [TOKENS_REVOKED]: { subject: { subject_type: 'iss-sub', iss: transmitter.issuer, sub } },
      }),
    );
    t.match(await applied, { [TOKENS_REVOKED]: { users: 1, tokensDeleted: 1 } });
    const account = await systemDb()
      .selectFrom('provider_accounts')
      .selectAll()
      .where('user_id', '=', user.id)
      .executeTakeFirstOrThrow();
    t.same(
      [account.access_token_sealed, account.refresh_token_sealed, account.token_metadata_sealed],
      [null, null, null],
    );

    applied = nextApplied(workers);
    const jti = randomUUID();
    await deliver(
      await transmitter.sign(
        {
          [`${RISC}account-credential-change-required`]: {
            subject: { subject_type: 'iss-sub', iss: transmitter.issuer, sub },
          },
          [`${RISC}verification`]: { state: 'abc' },
        },
        { jti },
      ),
    );
    await applied;
    const event = await systemDb()
      .selectFrom('risc_events')
      .selectAll()
      .where('jti', '=', jti)
      .executeTakeFirstOrThrow();
    t.ok(event.processed_at, 'recorded and processed');
    t.match(event.outcome, {
      [`${RISC}account-credential-change-required`]: { users: 1, recorded: true },
      [`${RISC}verification`]: { users: 0 },
    });
  },
);

t.test('a replayed jti is acknowledged and changes nothing', async (t) => {
  const { workers, transmitter, deliver } = await setup(t);
  const user = await userWithSession();
  const token = await transmitter.sign({
    [`${RISC}sessions-revoked`]: { subject: { subject_type: 'email', email: user.email } },
  });
  const applied = nextApplied(workers);
  t.equal((await deliver(token)).statusCode, 202);
  await applied;
  const fresh = randomToken();
  await systemDb()
    .insertInto('sessions')
    .values({ user_id: user.id, token_hash: hashToken(fresh), expires_at: new Date(Date.now() + 3600_000) })
    .execute();
  const before = await systemDb()
    .selectFrom('risc_events')
    .selectAll()
    .where('jti', '=', (JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { jti: string }).jti)
    .executeTakeFirstOrThrow();

  const replay = await deliver(token);
  t.equal(replay.statusCode, 202);
  t.equal(replay.body, '');
  t.ok(await cookieWorks(fresh), 'the session made after the first delivery survives the replay');
  const after = await systemDb()
    .selectFrom('risc_events')
    .selectAll()
    .where('jti', '=', before.jti)
    .executeTakeFirstOrThrow();
  t.same(after, before);
});

t.test(
  'validation failures are 400: another audience, another issuer, an unknown signer, HS256, garbage',
  async (t) => {
    const { transmitter, deliver } = await setup(t);
    const user = await userWithSession();
    const events = { [`${RISC}sessions-revoked`]: { subject: { subject_type: 'email', email: user.email } } };
    const stranger = await newKey();
    const hs = await new SignJWT({ events })
      .setProtectedHeader({ alg: 'HS256', kid: transmitter.keys[0]!.kid })
      .setIssuer(transmitter.issuer)
      .setAudience(CLIENT_ID)
      .setJti(randomUUID())
      .sign(new TextEncoder().encode('a shared secret of enough length!!'));
    const cases: [string, string][] = [
      ['another audience', await transmitter.sign(events, { aud: 'someone-else.apps.googleusercontent.com' })],
      ['another issuer', await transmitter.sign(events, { iss: 'https://evil.example' })],
      ['an unknown signer', await transmitter.sign(events, { key: stranger })],
      ['HS256', hs],
      ['no events', await transmitter.sign({})],
      ['garbage', 'aaa.bbb.ccc'],
      ['not a JWT', 'hello'],
    ];
    for (const [name, token] of cases) {
      const res = await deliver(token);
      t.equal(res.statusCode, 400, name);
      t.same(res.json(), { error: 'Invalid security event token' }, name);
    }
    t.ok(await cookieWorks(user.token), 'nothing happened');
    const count = await systemDb()
      .selectFrom('risc_events')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('issuer', '=', transmitter.issuer)
      .executeTakeFirstOrThrow();
    t.equal(Number(count.n), 0, 'nothing recorded');
  },
);

t.test('an unknown kid refreshes the key set (rotation), which is otherwise cached', async (t) => {
  const { workers, transmitter, deliver } = await setup(t, { RISC_KEY_SET_COOLDOWN_MS: '0' });
  const user = await userWithSession();
  const events = { [`${RISC}verification`]: { subject: { subject_type: 'email', email: user.email } } };
  let applied = nextApplied(workers);
  t.equal((await deliver(await transmitter.sign(events))).statusCode, 202);
  await applied;
  applied = nextApplied(workers);
  t.equal((await deliver(await transmitter.sign(events))).statusCode, 202);
  await applied;
  t.equal(transmitter.fetches(), 1, 'the key set was fetched once for two tokens');
  const rotated = await newKey();
  transmitter.keys.unshift(rotated);
  applied = nextApplied(workers);
  t.equal((await deliver(await transmitter.sign(events, { key: rotated }))).statusCode, 202);
  await applied;
  t.equal(transmitter.fetches(), 2, 'refetched for the new kid');
});

t.test('the legacy receiver matches users by email only', async (t) => {
  const { workers, transmitter, deliver } = await setup(t);
  const sub = `google-${randomUUID()}`;
  const user = await userWithSession(sub);
  let applied = nextApplied(workers);
  t.equal(
    (
      await deliver(
        await transmitter.sign({
          [`${RISC}sessions-revoked`]: { subject: { subject_type: 'iss-sub', iss: transmitter.issuer, sub } },
        }),
        '/api/auth/google/risc',
      )
    ).statusCode,
    202,
  );
  t.match(await applied, { [`${RISC}sessions-revoked`]: { users: 0 } });
  t.ok(await cookieWorks(user.token), 'a subject id alone matches nobody on the legacy route');
  applied = nextApplied(workers);
  t.equal(
    (
      await deliver(
        await transmitter.sign({
          [`${RISC}sessions-revoked`]: { subject: { subject_type: 'email', email: user.email } },
        }),
        '/api/auth/google/risc',
      )
    ).statusCode,
    202,
  );
  t.match(await applied, { [`${RISC}sessions-revoked`]: { users: 1, sessionsEnded: 1 } });
  t.notOk(await cookieWorks(user.token));
});

t.test('GET reports status and the supported kinds; unconfigured receivers say so', async (t) => {
  const { app } = await setup(t);
  const res = await app.inject({ method: 'GET', url: '/api/security/risc', headers: identityHeaders() });
  t.equal(res.statusCode, 200);
  t.same(res.json(), {
    status: 'ok',
    supportedEvents: [
      `${RISC}account-disabled`,
      `${RISC}account-enabled`,
      `${RISC}sessions-revoked`,
      TOKENS_REVOKED,
      `${RISC}account-credential-change-required`,
      `${RISC}verification`,
    ],
  });
  const bare = await build(t, { GOOGLE_CLIENT_ID: '', GOOGLE_RISC_AUDIENCES: '' });
  t.equal(
    (await bare.inject({ method: 'GET', url: '/api/security/risc', headers: identityHeaders() })).json().status,
    'not_configured',
  );
  const refused = await bare.inject({
    method: 'POST',
    url: '/api/security/risc',
    headers: { ...identityHeaders(), 'content-type': 'application/jwt' },
    payload: 'aaa.bbb.ccc',
  });
  t.equal(refused.statusCode, 503);
});
