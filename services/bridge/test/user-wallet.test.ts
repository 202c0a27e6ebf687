import t from 'tap';
import { createUserRow, identityHeaders, startChain, systemDb } from '@agentyard/testing';
import { erc20Abi, getAddress, parseEther, parseUnits } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { build } from './helper.ts';

// The signed-in user's wallet on a real local chain (hardhat): balances and USDC transfers read
// through the configured RPC, briefly cached; and the wallet features that answer 501.
const chain = await startChain();
t.teardown(() => chain.stop());
const usdc = await chain.deployToken({ name: 'USD Coin', symbol: 'USDC', decimals: 6 });
const { app } = await build(t, {
  UNDERGROUND_RPC_URL: chain.rpcUrl,
  UNDERGROUND_CHAIN_ID: String(chain.chainId),
  USDC_CONTRACT_ADDRESS: usdc,
  WALLET_CACHE_MS: '60000',
});

const funder = chain.accounts[0]!;
const wallet = privateKeyToAccount(generatePrivateKey());
const friend = chain.accounts[1]!.address;
const receipt = (hash: `0x${string}`) => chain.publicClient.waitForTransactionReceipt({ hash });
await receipt(
  await chain
    .walletClient(funder)
    .sendTransaction({ account: funder, chain: null, to: wallet.address, value: parseEther('1.5') }),
);
await chain.mint(usdc, wallet.address, parseUnits('250.5', 6));
const sent = await chain.walletClient(wallet).writeContract({
  account: wallet,
  chain: null,
  address: usdc,
  abi: erc20Abi,
  functionName: 'transfer',
  args: [friend, parseUnits('50', 6)],
});
await receipt(sent);

/** A user whose wallet sign-in linked `address` (as auth's wallet sign-in leaves the row). */
async function linkedUser(address: string) {
  const user = await createUserRow();
  await systemDb()
    .insertInto('provider_accounts')
    .values({
      user_id: user.id,
      provider: 'wallet',
      provider_subject: address.toLowerCase(),
      email: null,
      updated_at: new Date(),
    })
    .execute();
  return identityHeaders({ userId: user.id, email: user.email });
}
const get = (url: string, headers: Record<string, string>) => app.inject({ method: 'GET', url, headers });

t.test(
  'the linked wallet: its address, native and USDC balances and its transfers, newest first, read from the chain',
  async (t) => {
    const headers = await linkedUser(wallet.address);
    t.match((await get('/api/wallet/address', headers)).json(), { address: wallet.address, linkedAt: String });
    const res = await get('/api/wallet', headers);
    t.equal(res.statusCode, 200, res.body);
    const body = res.json();
    const wei = await chain.publicClient.getBalance({ address: wallet.address });
    t.ok(wei < parseEther('1.5') && wei > parseEther('1.4'), 'the transfer cost gas');
    t.match(body, {
      address: wallet.address,
      chainId: chain.chainId,
      native: { symbol: /^ETH$/, wei: wei.toString() },
      usdc: { contract: getAddress(usdc), balance: /^200\.5$/, units: /^200500000$/ },
      blockNumber: Number,
      fetchedAt: String,
    });
    t.same(
      body.transfers.map((tr: { direction: string; amount: string; from: string; to: string; token: string }) => [
        tr.direction,
        tr.amount,
        tr.from,
        tr.to,
        tr.token,
      ]),
      [
        ['out', '50', wallet.address, friend, 'USDC'],
        ['in', '250.5', '0x0000000000000000000000000000000000000000', wallet.address, 'USDC'],
      ],
    );
    t.equal(body.transfers[0].hash, sent);
    const one = (await get('/api/wallet/transactions?limit=1', headers)).json();
    t.same(one.transfers.length, 1);
    t.equal(one.transfers[0].hash, sent, 'the newest');
  },
);

t.test('any address may be looked at; a user with no linked wallet gets 404 for their own', async (t) => {
  const headers = identityHeaders({ userId: (await createUserRow()).id, email: 'nobody@example.test' });
  t.same((await get('/api/wallet/address', headers)).json(), { address: null, linkedAt: null });
  const mine = await get('/api/wallet', headers);
  t.equal(mine.statusCode, 404);
  t.has(mine.json(), { code: 'NO_LINKED_WALLET' });
  const theirs = await get(`/api/wallet/transactions?address=${friend.toLowerCase()}`, headers);
  t.equal(theirs.statusCode, 200);
  t.has(theirs.json(), { address: friend, transfers: [{ direction: 'in', amount: '50' }] });
});

t.test('reads are cached briefly: a mint after a read shows once the cache has passed', async (t) => {
  const fresh = privateKeyToAccount(generatePrivateKey());
  const headers = await linkedUser(fresh.address);
  const first = (await get('/api/wallet', headers)).json();
  t.equal(first.usdc.balance, '0');
  await chain.mint(usdc, fresh.address, parseUnits('7', 6));
  const again = (await get('/api/wallet', headers)).json();
  t.equal(again.fetchedAt, first.fetchedAt, 'the same read, within WALLET_CACHE_MS');
  t.equal(again.usdc.balance, '0');
  const { app: uncached } = await build(t, {
    UNDERGROUND_RPC_URL: chain.rpcUrl,
    UNDERGROUND_CHAIN_ID: String(chain.chainId),
    USDC_CONTRACT_ADDRESS: usdc,
    WALLET_CACHE_MS: '0',
  });
  t.equal(
    (await uncached.inject({ method: 'GET', url: '/api/wallet', headers })).json().usdc.balance,
    '7',
    'a process without the cached read sees the chain',
  );
});

t.test('an unreachable RPC is a 502 within its timeout', async (t) => {
  const { app: cut } = await build(t, {
    UNDERGROUND_RPC_URL: 'http://127.0.0.1:9',
    USDC_CONTRACT_ADDRESS: usdc,
    RPC_TIMEOUT_MS: '500',
  });
  const res = await cut.inject({
    method: 'GET',
    url: `/api/wallet?address=${friend}`,
    headers: identityHeaders({ userId: (await createUserRow()).id, email: 'x@example.test' }),
  });
  t.equal(res.statusCode, 502);
  t.match(res.json(), { error: 'Chain RPC unavailable' });
});

t.test('custodial wallets, payment sessions and x402: 501 NOT_SUPPORTED with the reason', async (t) => {
  const headers = identityHeaders({ userId: (await createUserRow()).id, email: 'y@example.test' });
  for (const path of ['/api/wallet/create', '/api/wallet/payment-sessions', '/api/wallet/x402']) {
    const res = await app.inject({ method: 'POST', url: path, headers });
    t.equal(res.statusCode, 501, path);
    t.match(res.json(), { error: /not offered/, code: /^NOT_SUPPORTED$/ });
  }
  t.equal(
    (await app.inject({ method: 'GET', url: '/api/wallet', headers: identityHeaders() })).statusCode,
    401,
    'signed out',
  );
});
