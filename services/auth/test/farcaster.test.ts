import t, { type Test } from 'tap';
import { createServer } from 'node:http';
import { createHmac } from 'node:crypto';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import solc from 'solc';
import type { Abi } from 'viem';
import { identityHeaders, startChain } from '@agentyard/testing';
import { build } from './helper.ts';

const AUDIENCE = new URL(process.env.PUBLIC_BASE_URL!).host;
const SECRET = 'a farcaster session secret of at least 32 characters';

/** The farcaster auth server's key set on loopback, and tokens signed with its key. */
async function startIssuer(t: Test) {
  const { publicKey, privateKey } = await generateKeyPair('ES256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'fc1', alg: 'ES256', use: 'sig' };
  const server = createServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(req.url === '/.well-known/jwks.json' ? { keys: [jwk] } : {}));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const issuer = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const sign = (claims: { sub?: string | number; aud?: string; iss?: string; expiresIn?: string }, key = privateKey) =>
    new SignJWT({ ...(claims.sub !== undefined ? { sub: claims.sub as string } : {}) })
      .setProtectedHeader({ alg: 'ES256', kid: 'fc1' })
      .setIssuer(claims.iss ?? issuer)
      .setAudience(claims.aud ?? AUDIENCE)
      .setIssuedAt()
      .setExpirationTime(claims.expiresIn ?? '10m')
      .sign(key);
  return { issuer, sign };
}

async function setup(t: Test, env: Record<string, string> = {}) {
  const issuer = await startIssuer(t);
  const app = await build(t, { FARCASTER_ISSUER: issuer.issuer, FARCASTER_SESSION_SECRET: SECRET, ...env });
  const post = (url: string, payload: object) =>
    app.inject({ method: 'POST', url, headers: identityHeaders(), payload });
  return { app, issuer, post };
}

const hmac = (data: string, secret: string) => createHmac('sha256', secret).update(data).digest('base64url');

t.test('a valid identity token gives an HMAC-SHA256 signed session token {data}.{signature}', async (t) => {
  const { issuer, post } = await setup(t);
  const res = await post('/api/auth/farcaster/verify', { token: await issuer.sign({ sub: '4242' }) });
  t.equal(res.statusCode, 200);
  const body = res.json();
  t.match(body, { fid: 4242, expiresAt: String, sessionToken: /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/ });
  const [data, signature] = body.sessionToken.split('.');
  t.equal(signature, hmac(data, SECRET), 'signed with FARCASTER_SESSION_SECRET');
  t.match(JSON.parse(Buffer.from(data, 'base64url').toString()), { fid: 4242 });

  const refreshed = await post('/api/auth/farcaster/refresh', { sessionToken: body.sessionToken });
  t.equal(refreshed.statusCode, 200);
  t.match(refreshed.json(), { fid: 4242, sessionToken: /\./ });
});

t.test(
  'identity tokens from another issuer, for another audience, expired or unsigned by the issuer are 401',
  async (t) => {
    const { issuer, post } = await setup(t);
    const { privateKey: stranger } = await generateKeyPair('ES256');
    for (const [name, token] of [
      ['another audience', await issuer.sign({ sub: '1', aud: 'evil.example' })],
      ['another issuer', await issuer.sign({ sub: '1', iss: 'https://evil.example' })],
      ['expired', await issuer.sign({ sub: '1', expiresIn: '-1m' })],
      ['another key', await issuer.sign({ sub: '1' }, stranger)],
      ['no fid', await issuer.sign({})],
      ['not a JWT', 'hello'],
    ] as const) {
      const res = await post('/api/auth/farcaster/verify', { token });
      t.equal(res.statusCode, 401, name);
      t.same(res.json(), { error: 'Invalid identity token' }, name);
    }
  },
);

t.test(
  'unsigned (older format), tampered or foreign-signed session tokens must be refreshed by signing in again',
  async (t) => {
    const { issuer, post } = await setup(t);
    const good = (await post('/api/auth/farcaster/verify', { token: await issuer.sign({ sub: '7' }) })).json()
      .sessionToken as string;
    const [data] = good.split('.');
    const forged = Buffer.from(JSON.stringify({ fid: 1, iat: 0, exp: 9_999_999_999 })).toString('base64url');
    for (const [name, token] of [
      ['unsigned, older format', Buffer.from(JSON.stringify({ fid: 7 })).toString('base64url')],
      ['tampered data', `${forged}.${good.split('.')[1]}`],
      ['signed with another secret', `${data}.${hmac(data!, 'some other secret of at least 32 characters')}`],
      ['three parts', `${good}.x`],
    ] as const) {
      const res = await post('/api/auth/farcaster/refresh', { sessionToken: token });
      t.equal(res.statusCode, 401, name);
      t.same(res.json(), { error: 'Invalid session token: sign in again', code: 'REFRESH_REQUIRED' }, name);
    }
  },
);

t.test('the session secret falls back to SESSION_SECRET; tokens too long expired are not refreshed', async (t) => {
  const { issuer, post } = await setup(t, {
    FARCASTER_SESSION_SECRET: '',
    FARCASTER_SESSION_TTL_SECONDS: '60',
    FARCASTER_REFRESH_WINDOW_SECONDS: '0',
  });
  const token = (await post('/api/auth/farcaster/verify', { token: await issuer.sign({ sub: '9' }) })).json()
    .sessionToken as string;
  const [data, signature] = token.split('.');
  t.equal(signature, hmac(data!, process.env.SESSION_SECRET!));
  const stale = Buffer.from(JSON.stringify({ fid: 9, iat: 1, exp: 61 })).toString('base64url');
  const res = await post('/api/auth/farcaster/refresh', {
    sessionToken: `${stale}.${hmac(stale, process.env.SESSION_SECRET!)}`,
  });
  t.equal(res.statusCode, 401);
  t.same(res.json(), { error: 'Session token too old to refresh: sign in again', code: 'REFRESH_REQUIRED' });
});

t.test('GET on both routes describes the configuration; a token-gated verify needs an address', async (t) => {
  const { app, issuer, post } = await setup(t);
  for (const url of ['/api/auth/farcaster/verify', '/api/auth/farcaster/refresh']) {
    const res = await app.inject({ method: 'GET', url, headers: identityHeaders() });
    t.same(res.json(), {
      issuer: issuer.issuer,
      audience: AUDIENCE,
      sessionTtlSeconds: 86400,
      refreshWindowSeconds: 604800,
      tokenGating: false,
    });
  }
  const res = await post('/api/auth/farcaster/verify', { token: await issuer.sign({ sub: '3' }), tokenGate: true });
  t.equal(res.statusCode, 400);
  t.same(res.json(), { error: 'address is required for the token-gating check' });
});

t.test(
  'the token gate opens only for an address bound to the fid: its custody address or, with a hub, a verified one',
  async (t) => {
    t.setTimeout(180_000);
    const chain = await startChain();
    t.teardown(() => chain.stop());
    // The IdRegistry's custodyOf, on the local chain.
    const source =
      'pragma solidity ^0.8.0; contract IdRegistry { mapping(uint256 => address) public custodyOf; function register(uint256 fid, address custody) external { custodyOf[fid] = custody; } }';
    const output = JSON.parse(
      solc.compile(
        JSON.stringify({
          language: 'Solidity',
          sources: { 'IdRegistry.sol': { content: source } },
          settings: { outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } } },
        }),
      ),
    );
    const compiled = output.contracts['IdRegistry.sol'].IdRegistry as {
      abi: Abi;
      evm: { bytecode: { object: string } };
    };
    const deployer = chain.walletClient(chain.accounts[8]!);
    const deployed = await chain.publicClient.waitForTransactionReceipt({
      hash: await deployer.deployContract({
        abi: compiled.abi,
        bytecode: `0x${compiled.evm.bytecode.object}`,
        account: chain.accounts[8]!,
        chain: deployer.chain,
      }),
    });
    const registry = deployed.contractAddress!;
    const [custody, verified, stranger] = [
      chain.accounts[5]!.address,
      chain.accounts[6]!.address,
      chain.accounts[7]!.address,
    ];
    await chain.publicClient.waitForTransactionReceipt({
      hash: await deployer.writeContract({
        address: registry,
        abi: compiled.abi,
        functionName: 'register',
        args: [4242n, custody],
        account: chain.accounts[8]!,
        chain: deployer.chain,
      }),
    });
    const token = await chain.deployToken({ name: 'Gate', symbol: 'GATE', decimals: 6 });
    for (const holder of [custody, verified, stranger]) await chain.mint(token, holder, 5_000_000n);

    const hub = createServer((req, res) => {
      const url = new URL(req.url!, 'http://hub.local');
      res.setHeader('content-type', 'application/json');
      const messages =
        url.pathname === '/v1/verificationsByFid' && url.searchParams.get('fid') === '4242'
          ? [
              {
                data: {
                  type: 'MESSAGE_TYPE_VERIFICATION_ADD_ETH_ADDRESS',
                  fid: 4242,
                  verificationAddAddressBody: { address: verified.toLowerCase(), protocol: 'PROTOCOL_ETHEREUM' },
                },
              },
            ]
          : [];
      res.end(JSON.stringify({ messages }));
    });
    await new Promise<void>((resolve) => hub.listen(0, '127.0.0.1', resolve));
    t.teardown(() => new Promise<void>((resolve) => hub.close(() => resolve())));
    const chainEnv = {
      BASE_RPC_URL: chain.rpcUrl,
      BASE_CHAIN_ID: String(chain.chainId),
      TOKEN_GATE_TOKEN_ADDRESS: token,
      TOKEN_GATE_MIN_BALANCE: '1000000',
      FARCASTER_RPC_URL: chain.rpcUrl,
      FARCASTER_ID_REGISTRY_ADDRESS: registry,
    };

    const withoutHub = await setup(t, chainEnv);
    const gated = async (s: typeof withoutHub, address: string) =>
      s.post('/api/auth/farcaster/verify', { token: await s.issuer.sign({ sub: '4242' }), tokenGate: true, address });
    const custodyRes = await gated(withoutHub, custody);
    t.equal(custodyRes.statusCode, 200, custodyRes.body);
    t.match(custodyRes.json(), { fid: 4242, sessionToken: /\./ });
    for (const [name, address] of [
      ["a stranger's funded wallet", stranger],
      ['a verified address, with no hub to ask', verified],
    ] as const) {
      const res = await gated(withoutHub, address);
      t.equal(res.statusCode, 403, name);
      t.same(
        res.json(),
        {
          error: 'This address is not the custody or a verified address of this farcaster account',
          code: 'ADDRESS_NOT_BOUND',
        },
        name,
      );
    }

    const withHub = await setup(t, {
      ...chainEnv,
      FARCASTER_HUB_URL: `http://127.0.0.1:${(hub.address() as { port: number }).port}`,
    });
    t.equal((await gated(withHub, verified)).statusCode, 200, 'a verified address of the fid');
    t.equal((await gated(withHub, stranger)).statusCode, 403, 'still not a stranger');
  },
);
