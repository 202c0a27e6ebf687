import t from 'tap';
import { identityHeaders, systemDb } from '@agentyard/testing';
import { build } from './helper.ts';

const service = () => identityHeaders({ surface: 'backend', auth: 'service' });
const { app } = await build(t, { BRIDGE_OPERATOR_IDENTITY: 'ops-desk' });
// A channel of this file's own: the window of the inbox spans the whole table otherwise.
await systemDb().deleteFrom('bridge_messages').execute();

async function send(body: object) {
  return app.inject({ method: 'POST', url: '/api/bridge/send', headers: service(), payload: body });
}
async function inbox(query: string) {
  const res = await app.inject({ method: 'GET', url: `/api/bridge/inbox?${query}`, headers: service() });
  if (res.statusCode !== 200) t.fail(res.body);
  return res.json();
}

t.test('send: allowed senders, defaults, the spec\'s messages', async (t) => {
  const res = await send({ sender: 'atlas-main', content: 'hello' });
  t.equal(res.statusCode, 200);
  t.match(res.json(), { ok: true, message: { id: Number, sender: 'atlas-main', channel: 'general', priority: 'normal', created_at: String } });
  t.equal((await send({ sender: 'ops-desk', content: 'x', channel: 'alerts', priority: 'urgent' })).statusCode, 200, 'the configured operator identity');
  t.same((await send({ sender: 'mallory', content: 'x' })).json(), { error: 'invalid sender' });
  t.same((await send({ content: 'x' })).json(), { error: 'sender and content are required' });
  t.same((await send({ sender: 'atlas-main', content: '  ' })).json(), { error: 'sender and content are required' });
  t.equal((await send({ sender: 'atlas-main', content: 'x', channel: 'random' })).statusCode, 400);
});

t.test('without the API key (no service identity) every bridge route is 401', async (t) => {
  for (const [method, url] of [['POST', '/api/bridge/send'], ['GET', '/api/bridge/inbox'], ['GET', '/api/bridge/health']] as const) {
    const res = await app.inject({ method, url, headers: identityHeaders({ surface: 'backend' }), payload: method === 'POST' ? { sender: 'atlas-main', content: 'x' } : undefined });
    t.equal(res.statusCode, 401, url);
  }
});

t.test('inbox: oldest first, read markers per reader, unknown marks nothing, limit', async (t) => {
  for (let i = 0; i < 5; i++) await send({ sender: 'atlas-agentyard', content: `task ${i}`, channel: 'tasks' });
  const first = await inbox('channel=tasks&reader=alice&limit=3');
  t.same(first.messages.map((m: { content: string }) => m.content), ['task 0', 'task 1', 'task 2']);
  t.equal(first.count, 3);
  t.same((await inbox('channel=tasks&reader=alice')).messages.map((m: { content: string }) => m.content), ['task 3', 'task 4'], 'read ones excluded');
  t.equal((await inbox('channel=tasks&reader=alice')).count, 0);
  t.equal((await inbox('channel=tasks&reader=bob')).count, 5, 'another reader has its own markers');
  t.equal((await inbox('channel=tasks')).count, 5, 'reader unknown');
  t.equal((await inbox('channel=tasks')).count, 5, 'unknown marked nothing');
  t.equal((await inbox(`channel=tasks&reader=carol&since=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`)).count, 0, 'since');
  const bad = await app.inject({ method: 'GET', url: '/api/bridge/inbox?limit=101', headers: service() });
  t.equal(bad.statusCode, 400);
});

t.test('inbox under concurrency: each message reaches each reader exactly once', async (t) => {
  const total = 120;
  await systemDb().insertInto('bridge_messages').values(Array.from({ length: total }, (_, i) => ({ sender: 'atlas-main', channel: 'alerts' as const, priority: 'fyi' as const, content: `alert ${i}` }))).execute();
  const readers = ['r1', 'r2', 'r3'];
  const seen = new Map(readers.map((r) => [r, [] as string[]]));
  // Eight overlapping pollers per reader until every poller comes back empty.
  await Promise.all(readers.flatMap((reader) => Array.from({ length: 8 }, async () => {
    for (;;) {
      const page = await inbox(`channel=alerts&reader=${reader}&limit=7`);
      if (page.count === 0) return;
      seen.get(reader)!.push(...page.messages.map((m: { content: string }) => m.content).filter((c: string) => c.startsWith('alert ')));
    }
  })));
  // A poller can come back empty while a peer still holds the rest of its page: drain once more.
  for (const reader of readers) seen.get(reader)!.push(...(await inbox(`channel=alerts&reader=${reader}&limit=100`)).messages.map((m: { content: string }) => m.content));
  for (const reader of readers) {
    const got = seen.get(reader)!;
    t.equal(got.length, total, `${reader}: nothing doubled`);
    t.equal(new Set(got).size, total, `${reader}: nothing lost`);
  }
});

t.test('health', async (t) => {
  const res = await app.inject({ method: 'GET', url: '/api/bridge/health', headers: service() });
  t.equal(res.statusCode, 200);
  t.match(res.json(), { status: 'ok', total_messages: Number, last_message: { sender: String, channel: String, created_at: String }, channels: ['general', 'tasks', 'alerts'], senders: ['atlas-main', 'atlas-agentyard', 'ops-desk'] });
});
