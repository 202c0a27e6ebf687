import t from 'tap';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { createUserRow, startPlatform, systemDb, uniqueEmail } from '@agentyard/testing';
import { busTypedData } from '../services/bridge/src/domain/bus-signatures.ts';
type Inbox = { messages: { content: string }[] };

// Real processes (bridge, trader, auth and the edge) over HTTP on loopback; a local server speaks
// the trading service's API.
t.setTimeout(120_000);
const upstreamSeen: { url: string; key: string | undefined }[] = [];
const upstream = createServer(async (req, res) => {
  for await (const _ of req) {
    /* drain */
  }
  upstreamSeen.push({ url: req.url ?? '', key: req.headers['x-api-key'] as string | undefined });
  res.setHeader('content-type', 'application/json');
  if (req.method === 'POST' && req.url === '/agent/prompt')
    return res.end(JSON.stringify({ success: true, jobId: 'job_e2e', status: 'pending' }));
  if (req.url === '/agent/job/job_e2e')
    return res.end(JSON.stringify({ success: true, jobId: 'job_e2e', status: 'completed', response: 'bought' }));
  if (req.url?.startsWith('/agent/balances')) return res.end(JSON.stringify({ balances: { base: '1.5' } }));
  res.writeHead(404).end('{}');
});
await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
t.teardown(() => {
  upstream.closeAllConnections();
  upstream.close();
});

const CHAIN_ID = 31337;
const platform = await startPlatform(['bridge', 'trader', 'auth'], {
  TRADER_API_URL: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`,
  TRADER_API_KEY: '',
  UNDERGROUND_RPC_URL: 'http://127.0.0.1:9',
  UNDERGROUND_CHAIN_ID: String(CHAIN_ID),
  QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}-e2e-bridge`,
  RATE_LIMITS: 'web-register=1000',
});
t.teardown(() => platform.stop());
const key = platform.env.INTERNAL_API_KEY!;

const backend = (
  path: string,
  init: { method?: string; body?: object; key?: string | null; user?: { id: string; email: string } } = {},
) => {
  const headers: Record<string, string> = {};
  if (init.body) headers['content-type'] = 'application/json';
  if (init.key !== null) headers.authorization = `Bearer ${init.key ?? key}`;
  if (init.user) Object.assign(headers, { 'x-user-id': init.user.id, 'x-user-email': init.user.email });
  return fetch(`${platform.backendUrl}${path}`, {
    method: init.method ?? (init.body ? 'POST' : 'GET'),
    headers,
    body: init.body ? JSON.stringify(init.body) : undefined,
  });
};
async function agentOf(userId: string) {
  return (
    await systemDb()
      .insertInto('agents')
      .values({
        user_id: userId,
        name: 'e2e',
        model: 'm',
        tools_profile: 'messaging',
        subdomain: `e2e-${crypto.randomUUID().slice(0, 8)}`,
      })
      .returning('id')
      .executeTakeFirstOrThrow()
  ).id;
}
const alice = await createUserRow();
const bob = await createUserRow();
const aliceAgent = await agentOf(alice.id);
const bobAgent = await agentOf(bob.id);

t.test('underground on the backend surface: the API key, then the user context, then ownership', async (t) => {
  const event = {
    agentId: aliceAgent,
    name: 'launch',
    description: 'd',
    venue: 'v',
    eventDate: '2027-03-01T20:00:00Z',
    ticketPriceUsdc: '5.5',
    totalTickets: 10,
  };
  const noKey = await backend('/api/underground/events', { body: event, key: null, user: alice });
  t.equal(noKey.status, 401);
  t.same(await noKey.json(), { error: 'Unauthorized' });
  t.equal(
    (await backend('/api/underground/events', { body: event, key: 'wrong-key', user: alice })).status,
    403,
    'a wrong key',
  );
  const noUser = await backend('/api/underground/events', { body: event });
  t.equal(noUser.status, 401);
  t.match(await noUser.json(), { error: /User context required/ });
  const notBobs = await backend('/api/underground/events', { body: event, user: bob });
  t.equal(notBobs.status, 403);
  t.same(await notBobs.json(), { error: 'Agent does not belong to this user' });
  const created = await backend('/api/underground/events', { body: { ...event, userId: bob.id }, user: alice });
  t.equal(created.status, 201);
  t.has(await created.json(), { agent_id: aliceAgent, name: 'launch', ticket_price_usdc: '5.5', total_tickets: 10 });
  t.same(await (await backend('/api/underground/events', { user: bob })).json(), [], "bob sees none of alice's events");
  t.equal(
    (await backend('/api/underground/wallets', { body: { agentId: aliceAgent }, key: null, user: alice })).status,
    401,
  );
  t.equal((await backend('/api/underground/wallets', { body: { agentId: aliceAgent }, user: bob })).status, 403);
});

t.test('bus send: no API key, authenticated by the signature alone', async (t) => {
  const signer = privateKeyToAccount(generatePrivateKey());
  const hook = 'https://hooks.example.test/agent';
  t.equal(
    (
      await backend(`/api/underground/agents/${aliceAgent}/bus`, {
        method: 'PUT',
        body: { walletAddress: signer.address, webhookUrl: hook },
        user: alice,
      })
    ).status,
    200,
  );
  t.equal(
    (
      await backend(`/api/underground/agents/${bobAgent}/bus`, {
        method: 'PUT',
        body: { walletAddress: privateKeyToAccount(generatePrivateKey()).address, webhookUrl: hook },
        user: bob,
      })
    ).status,
    200,
  );
  const message = {
    messageId: crypto.randomUUID(),
    action: 'PING',
    fromAgentId: aliceAgent,
    toAgentId: bobAgent,
    payload: { hi: 1 },
    timestamp: Math.floor(Date.now() / 1000),
  };
  const signature = await signer.signTypedData(busTypedData(message, CHAIN_ID));
  const sent = await backend('/api/underground/bus/send', { body: { ...message, signature }, key: null });
  t.equal(sent.status, 200);
  t.same(await sent.json(), { success: true, messageId: message.messageId });
  const replayed = await backend('/api/underground/bus/send', { body: { ...message, signature }, key: null });
  t.equal(replayed.status, 409, 'the same message again');
});

t.test('bridge send and inbox on the backend surface', async (t) => {
  const content = `e2e ${crypto.randomUUID()}`;
  t.equal((await backend('/api/bridge/send', { body: { sender: 'atlas-main', content }, key: null })).status, 401);
  const sent = await backend('/api/bridge/send', {
    body: { sender: 'atlas-main', content, channel: 'tasks', priority: 'urgent' },
  });
  t.equal(sent.status, 200);
  t.has(await sent.json(), { ok: true, message: { sender: 'atlas-main', channel: 'tasks', priority: 'urgent' } });
  const reader = `e2e-${crypto.randomUUID().slice(0, 8)}`;
  const inbox = (await (await backend(`/api/bridge/inbox?channel=tasks&reader=${reader}&limit=100`)).json()) as Inbox;
  t.ok(inbox.messages.some((m: { content: string }) => m.content === content));
  const again = (await (await backend(`/api/bridge/inbox?channel=tasks&reader=${reader}&limit=100`)).json()) as Inbox;
  t.notOk(
    again.messages.some((m: { content: string }) => m.content === content),
    'read once per reader',
  );
  t.equal((await backend('/api/bridge/health')).status, 200);
});

t.test('trader relay on the web surface with a session cookie', async (t) => {
  const web = (path: string, init: { method?: string; body?: object; cookie?: string } = {}) =>
    fetch(`${platform.webUrl}${path}`, {
      method: init.method ?? (init.body ? 'POST' : 'GET'),
      headers: {
        ...(init.body ? { 'content-type': 'application/json' } : {}),
        ...(init.cookie ? { cookie: init.cookie } : {}),
      },
      body: init.body ? JSON.stringify(init.body) : undefined,
    });
  const email = uniqueEmail('trader-e2e');
  t.equal((await web('/api/register', { body: { email, password: 'trader password' } })).status, 201);
  const login = await web('/api/auth/login', { body: { email, password: 'trader password' } });
  const cookie = login.headers
    .getSetCookie()
    .find((c) => c.startsWith('agentyard-session='))!
    .split(';')[0]!;

  t.equal((await web('/api/trader/balances')).status, 401, 'signed out');
  const noKey = await web('/api/trader/prompt', { body: { prompt: 'buy' }, cookie });
  t.equal(noKey.status, 503);
  t.match(await noKey.json(), { error: String, needsKey: true });
  t.same(await (await web('/api/user/trader-key', { body: { apiKey: 'user-trading-key' }, cookie })).json(), {
    success: true,
  });
  t.same(await (await web('/api/user/trader-key', { cookie })).json(), { configured: true });
  t.same(await (await web('/api/trader/prompt', { body: { prompt: 'buy' }, cookie })).json(), {
    success: true,
    jobId: 'job_e2e',
    status: 'pending',
  });
  t.same(await (await web('/api/trader/prompt?jobId=job_e2e', { cookie })).json(), {
    success: true,
    jobId: 'job_e2e',
    status: 'completed',
    response: 'bought',
  });
  t.same(await (await web('/api/trader/balances?chains=base', { cookie })).json(), { balances: { base: '1.5' } });
  t.same(
    upstreamSeen.map((s) => s.key),
    ['user-trading-key', 'user-trading-key', 'user-trading-key'],
    "the user's own key, every call",
  );
  t.same(await (await web('/api/user/trader-key', { method: 'DELETE', cookie })).json(), { success: true });
  t.same(await (await web('/api/user/trader-key', { cookie })).json(), { configured: false });
});
