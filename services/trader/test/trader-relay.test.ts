import t from 'tap';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createUserRow, identityHeaders, systemDb } from '@agentyard/testing';
import { build } from './helper.ts';

// A local server speaking the trading service's API: prompt → job id → job status; balances by chain.
const seen: { method: string; url: string; key: string | undefined; body: unknown }[] = [];
let mode: 'ok' | 'fail' | 'hang' = 'ok';
const upstream = createServer(async (req: IncomingMessage, res) => {
  let raw = '';
  for await (const chunk of req) raw += chunk;
  seen.push({ method: req.method!, url: req.url!, key: req.headers['x-api-key'] as string | undefined, body: raw ? JSON.parse(raw) : undefined });
  if (mode === 'hang') return;
  if (mode === 'fail') { res.writeHead(500, { 'content-type': 'application/json' }); return res.end('{"error":"boom"}'); }
  res.setHeader('content-type', 'application/json');
  if (req.method === 'POST' && req.url === '/agent/prompt') return res.end(JSON.stringify({ success: true, jobId: 'job_1', status: 'pending' }));
  if (req.url === '/agent/job/job_1') return res.end(JSON.stringify({ success: true, jobId: 'job_1', status: 'completed', response: 'done' }));
  if (req.url?.startsWith('/agent/balances')) return res.end(JSON.stringify({ chains: new URL(req.url, 'http://x').searchParams.get('chains')!.split(',') }));
  res.writeHead(404).end('{}');
});
await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
t.teardown(() => { upstream.closeAllConnections(); upstream.close(); });
const upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;

const user = await createUserRow();
const as = () => identityHeaders({ userId: user.id, email: user.email });
const noPlatformKey = { TRADER_API_URL: upstreamUrl, TRADER_API_KEY: undefined, TRADER_TIMEOUT_MS: '500' };

t.test('without any key: 503 needsKey; with the platform key: relayed', async (t) => {
  const app = await build(t, noPlatformKey);
  const res = await app.inject({ method: 'POST', url: '/api/trader/prompt', headers: as(), payload: { prompt: 'buy' } });
  t.equal(res.statusCode, 503);
  t.match(res.json(), { error: String, needsKey: true });
  const withPlatform = await build(t, { ...noPlatformKey, TRADER_API_KEY: 'platform-key-123' });
  const relayed = await withPlatform.inject({ method: 'POST', url: '/api/trader/prompt', headers: as(), payload: { prompt: 'buy', threadId: 'th1' } });
  t.same(relayed.json(), { success: true, jobId: 'job_1', status: 'pending' });
  t.match(seen.at(-1), { method: 'POST', url: '/agent/prompt', key: 'platform-key-123', body: { prompt: 'buy', threadId: 'th1' } });
});

t.test('the user\'s key: stored sealed, used before the platform key, replaced, deleted', async (t) => {
  const app = await build(t, { ...noPlatformKey, TRADER_API_KEY: 'platform-key-123' });
  t.same((await app.inject({ method: 'GET', url: '/api/user/trader-key', headers: as() })).json(), { configured: false });
  t.same((await app.inject({ method: 'POST', url: '/api/user/trader-key', headers: as(), payload: { apiKey: 'user-key-1' } })).json(), { success: true });
  t.same((await app.inject({ method: 'POST', url: '/api/user/trader-key', headers: as(), payload: { apiKey: 'user-key-2' } })).json(), { success: true });
  t.same((await app.inject({ method: 'GET', url: '/api/user/trader-key', headers: as() })).json(), { configured: true });
  const row = await systemDb().selectFrom('user_trader_keys').selectAll().where('user_id', '=', user.id).executeTakeFirstOrThrow();
  t.notOk(row.api_key_sealed.includes('user-key'), 'sealed at rest');
  const job = await app.inject({ method: 'GET', url: '/api/trader/prompt?jobId=job_1', headers: as() });
  t.match(job.json(), { status: 'completed', response: 'done' });
  t.equal(seen.at(-1)!.key, 'user-key-2', 'the replacing key is used');
  const balances = await app.inject({ method: 'GET', url: '/api/trader/balances', headers: as() });
  t.same(balances.json(), { chains: ['base', 'polygon', 'mainnet', 'solana', 'unichain'] });
  t.same((await app.inject({ method: 'GET', url: '/api/trader/balances?chains=base', headers: as() })).json(), { chains: ['base'] });
  t.same((await app.inject({ method: 'DELETE', url: '/api/user/trader-key', headers: as() })).json(), { success: true });
  t.same((await app.inject({ method: 'GET', url: '/api/user/trader-key', headers: as() })).json(), { configured: false });
});

t.test('bad input and failures: 400 without jobId, bad keys, 502 on upstream errors and timeouts, 401 signed out', async (t) => {
  const app = await build(t, { ...noPlatformKey, TRADER_API_KEY: 'platform-key-123' });
  t.same((await app.inject({ method: 'GET', url: '/api/trader/prompt', headers: as() })).json(), { error: 'jobId is required' });
  for (const apiKey of ['', ' ', 'k'.repeat(513)]) t.equal((await app.inject({ method: 'POST', url: '/api/user/trader-key', headers: as(), payload: { apiKey } })).statusCode, 400);
  t.equal((await app.inject({ method: 'GET', url: '/api/user/trader-key', headers: identityHeaders() })).statusCode, 401);
  mode = 'fail';
  const failed = await app.inject({ method: 'POST', url: '/api/trader/prompt', headers: as(), payload: { prompt: 'x' } });
  t.equal(failed.statusCode, 502);
  t.notOk(failed.body.includes('platform-key-123'));
  mode = 'hang';
  const hung = await app.inject({ method: 'GET', url: '/api/trader/balances', headers: as() });
  t.equal(hung.statusCode, 502);
  t.match(hung.json(), { error: /timed out/ });
  mode = 'ok';
});

t.test('keys sealed with an older key still work after rotation and are re-sealed with the current one', async (t) => {
  const oldKeys = process.env.ENCRYPTION_KEYS!;
  const before = await build(t, { ...noPlatformKey });
  await before.inject({ method: 'POST', url: '/api/user/trader-key', headers: as(), payload: { apiKey: 'rotating-key' } });
  const rotated = await build(t, { ...noPlatformKey, ENCRYPTION_KEYS: `k2:${Buffer.alloc(32, 7).toString('base64')},${oldKeys}` });
  const res = await rotated.inject({ method: 'GET', url: '/api/trader/prompt?jobId=job_1', headers: as() });
  t.equal(res.statusCode, 200);
  t.equal(seen.at(-1)!.key, 'rotating-key');
  const row = await systemDb().selectFrom('user_trader_keys').selectAll().where('user_id', '=', user.id).executeTakeFirstOrThrow();
  t.equal(row.api_key_sealed.split('.')[1], 'k2');
});
