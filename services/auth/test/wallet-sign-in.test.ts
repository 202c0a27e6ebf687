import t, { type Test } from 'tap';
import { randomBytes } from 'node:crypto';
import { sql } from '@agentyard/db';
import { hashToken } from '@agentyard/crypto';
import { appDb, createUserRow, identityHeaders, startChain, systemDb } from '@agentyard/testing';
import { createSiweMessage } from 'viem/siwe';
import { privateKeyToAccount } from 'viem/accounts';
import { build } from './helper.ts';

// One real local chain (hardhat) for the whole file: starting it and compiling contracts takes a while.
t.setTimeout(180_000);
const chain = await startChain();
t.teardown(() => chain.stop());
const DOMAIN = new URL(process.env.PUBLIC_BASE_URL!).host;

async function setup(t: Test, env: Record<string, string> = {}) {
  const app = await build(t, { BASE_RPC_URL: chain.rpcUrl, BASE_CHAIN_ID: String(chain.chainId), ...env });
  const nonce = async () =>
    (await app.inject({ method: 'POST', url: '/api/auth/nonce', headers: identityHeaders() })).json().nonce as string;
  const message = (
    address: `0x${string}`,
    n: string,
    overrides: Partial<Parameters<typeof createSiweMessage>[0]> = {},
  ) =>
    createSiweMessage({
      address,
      chainId: chain.chainId,
      domain: DOMAIN,
      nonce: n,
      uri: process.env.PUBLIC_BASE_URL!,
      version: '1',
      statement: 'Sign in to Agentyard',
      issuedAt: new Date(),
      expirationTime: new Date(Date.now() + 5 * 60_000),
      ...overrides,
    });
  const signIn = (address: string, msg: string, signature: string, extra: object = {}) =>
    app.inject({
      method: 'POST',
      url: '/api/wallet-auth',
      headers: identityHeaders(),
      payload: { address, message: msg, signature, ...extra },
    });
  return { app, nonce, message, signIn };
}

const sessionCookie = (res: { headers: Record<string, unknown> }) =>
  /agentyard-session=([^;]+)/.exec(String(res.headers['set-cookie'] ?? ''))?.[1];
async function userOfCookie(token: string | undefined) {
  if (!token) return null;
  const { rows } = await sql<{ user_id: string }>`select * from auth_session_identity(${hashToken(token)})`.execute(
    appDb(),
  );
  return rows[0]?.user_id ?? null;
}

t.test('nonces: random, short-lived, stored server-side; GET and POST both issue one', async (t) => {
  const { app } = await setup(t);
  const a = (await app.inject({ method: 'GET', url: '/api/auth/nonce', headers: identityHeaders() })).json();
  const b = (await app.inject({ method: 'POST', url: '/api/auth/nonce', headers: identityHeaders() })).json();
  t.match(a.nonce, /^[0-9a-f]{32}$/);
  t.not(a.nonce, b.nonce);
  const ttl = new Date(a.expiresAt).getTime() - Date.now();
  t.ok(ttl > 0 && ttl <= 300_000, 'expires within five minutes');
  t.ok(await systemDb().selectFrom('auth_nonces').select('nonce').where('nonce', '=', a.nonce).executeTakeFirst());
});

t.test(
  'a plain account signs in: user <address>@wallet.agentyard, session cookie; the nonce is single use',
  async (t) => {
    const { nonce, message, signIn } = await setup(t);
    const account = privateKeyToAccount(`0x${randomBytes(32).toString('hex')}`);
    const msg = message(account.address, await nonce());
    const signature = await account.signMessage({ message: msg });
    const res = await signIn(account.address, msg, signature);
    t.equal(res.statusCode, 200);
    const body = res.json();
    t.has(body, {
      ok: true,
      address: account.address,
      user: { email: `${account.address.toLowerCase()}@wallet.agentyard`, name: account.address },
    });
    t.equal(await userOfCookie(sessionCookie(res)), body.user.id, 'the cookie is a live session of that user');

    const replay = await signIn(account.address, msg, signature);
    t.equal(replay.statusCode, 401);
    t.same(replay.json(), { error: 'Invalid or expired nonce' });

    const again = message(account.address, await nonce());
    const second = await signIn(account.address, again, await account.signMessage({ message: again }));
    t.equal(second.json().user.id, body.user.id, 'the same wallet is the same user');
  },
);

t.test('a deployed smart wallet (ERC-1271) and a not-yet-deployed one (ERC-6492) sign in', async (t) => {
  const { nonce, message, signIn } = await setup(t);
  const owner = chain.accounts[3]!;
  const deployed = await chain.deploySmartWallet(owner);
  const msg1271 = message(deployed, await nonce());
  const res1271 = await signIn(deployed, msg1271, await chain.signAsSmartWallet(owner, msg1271, { address: deployed }));
  t.equal(res1271.statusCode, 200, res1271.body);
  t.equal(res1271.json().user.email, `${deployed.toLowerCase()}@wallet.agentyard`);

  const future = await chain.counterfactualSmartWallet(owner);
  t.equal(await chain.publicClient.getCode({ address: future.address }), undefined, 'not deployed');
  const msg6492 = message(future.address, await nonce());
  const res6492 = await signIn(future.address, msg6492, await chain.signAsSmartWallet(owner, msg6492, future));
  t.equal(res6492.statusCode, 200, res6492.body);
  t.ok(sessionCookie(res6492));

  const stranger = chain.accounts[4]!;
  const msgForged = message(deployed, await nonce());
  const forged = await signIn(
    deployed,
    msgForged,
    await chain.signAsSmartWallet(stranger, msgForged, { address: deployed }),
  );
  t.equal(forged.statusCode, 401, 'a signature by someone who does not own the wallet');
  t.same(forged.json(), { error: 'Invalid wallet signature' });
});

t.test(
  "account takeover: an account holding the wallet's email that this wallet never signed in to is not joined",
  async (t) => {
    const { app, nonce, message, signIn } = await setup(t);
    const account = privateKeyToAccount(`0x${randomBytes(32).toString('hex')}`);
    const walletAddress = `${account.address.toLowerCase()}@wallet.agentyard`;
    const registered = await app.inject({
      method: 'POST',
      url: '/api/register',
      headers: identityHeaders(),
      payload: { email: walletAddress, password: 'attacker password' },
    });
    t.equal(registered.statusCode, 400, 'registration refuses the wallet domain');
    // An account made with that address before the domain was reserved.
    const squatter = await systemDb()
      .insertInto('users')
      .values({ email: walletAddress, name: 'Squatter' })
      .returning('id')
      .executeTakeFirstOrThrow();
    const msg = message(account.address, await nonce());
    const res = await signIn(account.address, msg, await account.signMessage({ message: msg }));
    t.equal(res.statusCode, 409);
    t.same(res.json(), {
      error: "This wallet's address belongs to an account that never signed in with this wallet",
      code: 'WALLET_EMAIL_TAKEN',
    });
    t.notOk(sessionCookie(res), "no session in the squatter's account");
    t.equal(
      (await systemDb().selectFrom('provider_accounts').select('id').where('user_id', '=', squatter.id).execute())
        .length,
      0,
      'the wallet is not linked to it',
    );
  },
);

t.test('a wallet user is not an email account: its address is never verified', async (t) => {
  const { app, nonce, message, signIn } = await setup(t);
  const account = privateKeyToAccount(`0x${randomBytes(32).toString('hex')}`);
  const msg = message(account.address, await nonce());
  const user = (await signIn(account.address, msg, await account.signMessage({ message: msg }))).json().user;
  const session = await app.inject({
    method: 'GET',
    url: '/api/auth/session',
    headers: identityHeaders({ userId: user.id, auth: 'session' }),
  });
  t.equal(session.json().user.emailVerified, false);
});

t.test(
  'with INVITE_REQUIRED a new wallet needs an invite (used up with the account); a known wallet does not',
  async (t) => {
    const { app, nonce, message, signIn } = await setup(t, { INVITE_REQUIRED: 'true' });
    const creator = await createUserRow();
    const invite = (
      await app.inject({
        method: 'POST',
        url: '/api/invite',
        headers: identityHeaders({ userId: creator.id }),
        payload: { name: 'A Friend' },
      })
    ).json().token as string;
    const account = privateKeyToAccount(`0x${randomBytes(32).toString('hex')}`);
    const attempt = async (extra: object = {}) => {
      const msg = message(account.address, await nonce());
      return signIn(account.address, msg, await account.signMessage({ message: msg }), extra);
    };
    const refused = await attempt();
    t.equal(refused.statusCode, 403);
    t.same(refused.json(), { error: 'An invite is required to register: pass inviteToken', code: 'INVITE_REQUIRED' });
    t.equal(
      (
        await systemDb()
          .selectFrom('users')
          .select('id')
          .where('email', '=', `${account.address.toLowerCase()}@wallet.agentyard`)
          .execute()
      ).length,
      0,
      'nobody created',
    );
    t.equal((await attempt({ inviteToken: 'zz' })).statusCode, 400, 'a malformed invite is bad input');
    const admitted = await attempt({ inviteToken: invite });
    t.equal(admitted.statusCode, 200, admitted.body);
    t.equal(
      (
        await systemDb()
          .selectFrom('invites')
          .select('used_by')
          .where('token_hash', '=', hashToken(invite))
          .executeTakeFirstOrThrow()
      ).used_by,
      admitted.json().user.id,
    );
    t.equal((await attempt()).json().user?.id, admitted.json().user.id, 'the same wallet signs in again without one');

    const another = privateKeyToAccount(`0x${randomBytes(32).toString('hex')}`);
    const msg = message(another.address, await nonce());
    const used = await signIn(another.address, msg, await another.signMessage({ message: msg }), {
      inviteToken: invite,
    });
    t.equal(used.statusCode, 410, 'a used invite admits nobody else');
  },
);

t.test('refusals: wrong signer, domain, chain, address, expiry, unknown nonce, disabled account', async (t) => {
  const { nonce, message, signIn } = await setup(t);
  const account = privateKeyToAccount(`0x${randomBytes(32).toString('hex')}`);
  const other = privateKeyToAccount(`0x${randomBytes(32).toString('hex')}`);
  const cases: [string, () => Promise<[string, string, string]>, number, string][] = [
    [
      'signed by another key',
      async () => {
        const m = message(account.address, await nonce());
        return [account.address, m, await other.signMessage({ message: m })];
      },
      401,
      'Invalid wallet signature',
    ],
    [
      'another domain',
      async () => {
        const m = message(account.address, await nonce(), { domain: 'evil.example' });
        return [account.address, m, await account.signMessage({ message: m })];
      },
      400,
      'Invalid sign-in message: wrong domain',
    ],
    [
      'another chain',
      async () => {
        const m = message(account.address, await nonce(), { chainId: 1 });
        return [account.address, m, await account.signMessage({ message: m })];
      },
      400,
      'Invalid sign-in message: wrong chain',
    ],
    [
      'another address',
      async () => {
        const m = message(account.address, await nonce());
        return [other.address, m, await account.signMessage({ message: m })];
      },
      400,
      'Invalid sign-in message: address does not match',
    ],
    [
      'expired',
      async () => {
        const m = message(account.address, await nonce(), {
          issuedAt: new Date(Date.now() - 120_000),
          expirationTime: new Date(Date.now() - 60_000),
        });
        return [account.address, m, await account.signMessage({ message: m })];
      },
      400,
      'Invalid sign-in message: expired',
    ],
    [
      'another origin in uri',
      async () => {
        const m = message(account.address, await nonce(), { uri: 'https://evil.example/login' });
        return [account.address, m, await account.signMessage({ message: m })];
      },
      400,
      'Invalid sign-in message: wrong uri',
    ],
    [
      'issued in the future',
      async () => {
        const m = message(account.address, await nonce(), {
          issuedAt: new Date(Date.now() + 5 * 60_000),
          expirationTime: new Date(Date.now() + 10 * 60_000),
        });
        return [account.address, m, await account.signMessage({ message: m })];
      },
      400,
      'Invalid sign-in message: issued in the future',
    ],
    [
      'issued too long ago',
      async () => {
        const m = message(account.address, await nonce(), {
          issuedAt: new Date(Date.now() - 11 * 60_000),
          expirationTime: new Date(Date.now() + 60_000),
        });
        return [account.address, m, await account.signMessage({ message: m })];
      },
      400,
      'Invalid sign-in message: issued too long ago',
    ],
    [
      'not yet valid',
      async () => {
        const m = message(account.address, await nonce(), { notBefore: new Date(Date.now() + 5 * 60_000) });
        return [account.address, m, await account.signMessage({ message: m })];
      },
      400,
      'Invalid sign-in message: not yet valid',
    ],
    [
      'a nonce we never issued',
      async () => {
        const m = message(account.address, 'a1b2c3d4e5f6a7b8c9d0');
        return [account.address, m, await account.signMessage({ message: m })];
      },
      401,
      'Invalid or expired nonce',
    ],
    [
      'not a sign-in message',
      async () => [account.address, 'hello', await account.signMessage({ message: 'hello' })],
      400,
      'Invalid sign-in message: not a Sign-In With Ethereum message',
    ],
  ];
  for (const [name, make, status, error] of cases) {
    const res = await signIn(...(await make()));
    t.equal(res.statusCode, status, name);
    t.same(res.json(), { error }, name);
    t.notOk(sessionCookie(res), `${name}: no cookie`);
  }
  t.equal(
    (
      await systemDb()
        .selectFrom('users')
        .select('id')
        .where('email', '=', `${account.address.toLowerCase()}@wallet.agentyard`)
        .execute()
    ).length,
    0,
    'no user was created',
  );

  await systemDb()
    .insertInto('users')
    .values({ email: `${account.address.toLowerCase()}@wallet.agentyard`, name: 'x', external_signin_disabled: true })
    .execute();
  const m = message(account.address, await nonce());
  const disabled = await signIn(account.address, m, await account.signMessage({ message: m }));
  t.equal(disabled.statusCode, 403);
  t.same(disabled.json(), { error: 'External sign-in is disabled for this account', code: 'EXTERNAL_SIGNIN_DISABLED' });
});

t.test('token gating: enough of the configured ERC-20 passes, too little is 403, unconfigured is 503', async (t) => {
  const token = await chain.deployToken({ name: 'Gate', symbol: 'GATE', decimals: 6 });
  const holder = chain.accounts[5]!.address;
  const poor = chain.accounts[6]!.address;
  await chain.mint(token, holder, 5_000_000n);
  await chain.mint(token, poor, 999_999n);
  const app = await build(t, {
    BASE_RPC_URL: chain.rpcUrl,
    BASE_CHAIN_ID: String(chain.chainId),
    TOKEN_GATE_TOKEN_ADDRESS: token,
    TOKEN_GATE_MIN_BALANCE: '1000000',
  });
  const ok = await app.inject({
    method: 'GET',
    url: `/api/auth/token-gating/verify?address=${holder}`,
    headers: identityHeaders(),
  });
  t.equal(ok.statusCode, 200);
  t.same(ok.json(), {
    eligible: true,
    address: holder,
    token,
    chainId: chain.chainId,
    balance: '5000000',
    minimum: '1000000',
  });
  const post = await app.inject({
    method: 'POST',
    url: '/api/auth/token-gating/verify',
    headers: identityHeaders(),
    payload: { address: holder },
  });
  t.equal(post.statusCode, 200);
  const refused = await app.inject({
    method: 'POST',
    url: '/api/auth/token-gating/verify',
    headers: identityHeaders(),
    payload: { address: poor },
  });
  t.equal(refused.statusCode, 403);
  t.same(refused.json(), {
    error: 'Insufficient token balance',
    code: 'TOKEN_GATE',
    balance: '999999',
    minimum: '1000000',
  });
  const bad = await app.inject({
    method: 'GET',
    url: '/api/auth/token-gating/verify?address=0x123',
    headers: identityHeaders(),
  });
  t.equal(bad.statusCode, 400);

  const unconfigured = await build(t, { BASE_RPC_URL: chain.rpcUrl, BASE_CHAIN_ID: String(chain.chainId) });
  const res = await unconfigured.inject({
    method: 'GET',
    url: `/api/auth/token-gating/verify?address=${holder}`,
    headers: identityHeaders(),
  });
  t.equal(res.statusCode, 503);
});
