import t from 'tap';
import { sql } from '@agentyard/db';
import { identityHeaders, malformedCursors, systemDb, walkPages } from '@agentyard/testing';
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

t.test("send: allowed senders, defaults, the interface's messages", async (t) => {
  const res = await send({ sender: 'atlas-main', content: 'hello' });
  t.equal(res.statusCode, 200);
  t.match(res.json(), {
    ok: true,
    message: { id: Number, sender: /^atlas-main$/, channel: /^general$/, priority: /^normal$/, created_at: String },
  });
  t.equal(
    (await send({ sender: 'ops-desk', content: 'x', channel: 'alerts', priority: 'urgent' })).statusCode,
    200,
    'the configured operator identity',
  );
  t.same((await send({ sender: 'mallory', content: 'x' })).json(), { error: 'invalid sender' });
  t.same((await send({ content: 'x' })).json(), { error: 'sender and content are required' });
  t.same((await send({ sender: 'atlas-main', content: '  ' })).json(), { error: 'sender and content are required' });
  t.equal((await send({ sender: 'atlas-main', content: 'x', channel: 'random' })).statusCode, 400);
});

t.test('without the API key (no service identity) every bridge route is 401', async (t) => {
  for (const [method, url] of [
    ['POST', '/api/bridge/send'],
    ['GET', '/api/bridge/inbox'],
    ['GET', '/api/bridge/health'],
  ] as const) {
    const res = await app.inject({
      method,
      url,
      headers: identityHeaders({ surface: 'backend' }),
      payload: method === 'POST' ? { sender: 'atlas-main', content: 'x' } : undefined,
    });
    t.equal(res.statusCode, 401, url);
  }
});

t.test('inbox: oldest first, read markers per reader, unknown marks nothing, limit', async (t) => {
  for (let i = 0; i < 5; i++) await send({ sender: 'atlas-agentyard', content: `task ${i}`, channel: 'tasks' });
  const first = await inbox('channel=tasks&reader=alice&limit=3');
  t.same(
    first.messages.map((m: { content: string }) => m.content),
    ['task 0', 'task 1', 'task 2'],
  );
  t.equal(first.count, 3);
  t.same(
    (await inbox('channel=tasks&reader=alice')).messages.map((m: { content: string }) => m.content),
    ['task 3', 'task 4'],
    'read ones excluded',
  );
  t.equal((await inbox('channel=tasks&reader=alice')).count, 0);
  t.equal((await inbox('channel=tasks&reader=bob')).count, 5, 'another reader has its own markers');
  t.equal((await inbox('channel=tasks')).count, 5, 'reader unknown');
  t.equal((await inbox('channel=tasks')).count, 5, 'unknown marked nothing');
  t.equal(
    (await inbox(`channel=tasks&reader=carol&since=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`))
      .count,
    0,
    'since',
  );
  const bad = await app.inject({ method: 'GET', url: '/api/bridge/inbox?limit=101', headers: service() });
  t.equal(bad.statusCode, 400);
});

t.test('inbox under concurrency: each message reaches each reader exactly once', async (t) => {
  const stored = 120;
  const sent = 60;
  await systemDb()
    .insertInto('bridge_messages')
    .values(
      Array.from({ length: stored }, (_, i) => ({
        sender: 'atlas-main',
        channel: 'alerts' as const,
        priority: 'fyi' as const,
        content: `alert ${i}`,
      })),
    )
    .execute();
  // A since in the middle of the stored messages: pollers using it leave the older ones to the others.
  const middle = await systemDb()
    .selectFrom('bridge_messages')
    .select('created_at')
    .where('content', '=', `alert ${stored / 2}`)
    .executeTakeFirstOrThrow();
  const readers = ['r1', 'r2', 'r3'];
  const seen = new Map(readers.map((r) => [r, [] as string[]]));
  const alerts = (page: { messages: { content: string }[] }) =>
    page.messages.map((m) => m.content).filter((c) => c.startsWith('alert '));
  // Messages keep arriving while the readers poll: sends race the reads that mark the channel.
  let sending = true;
  const sends = Promise.all(
    Array.from({ length: 6 }, async (_, s) => {
      for (let i = 0; i < sent / 6; i++)
        t.equal(
          (
            await send({
              sender: 'atlas-main',
              channel: 'alerts',
              priority: 'fyi',
              content: `alert ${stored + s * 10 + i}`,
            })
          ).statusCode,
          200,
        );
    }),
  ).finally(() => {
    sending = false;
  });
  // Eight overlapping pollers per reader, with different limits and since, until sending is over and a poll comes back empty.
  await Promise.all([
    sends,
    ...readers.flatMap((reader) =>
      Array.from({ length: 8 }, async (_, p) => {
        const since = p % 2 ? `&since=${encodeURIComponent(middle.created_at.toISOString())}` : '';
        for (;;) {
          const wasSending = sending;
          const page = await inbox(`channel=alerts&reader=${reader}&limit=${1 + ((p * 3) % 10)}${since}`);
          seen.get(reader)!.push(...alerts(page));
          if (page.count === 0 && !wasSending) return;
        }
      }),
    ),
  ]);
  // A poller can come back empty while a peer still holds the rest of its page: drain once more.
  for (const reader of readers)
    seen
      .get(reader)!
      .push(
        ...alerts(await inbox(`channel=alerts&reader=${reader}&limit=100`)),
        ...alerts(await inbox(`channel=alerts&reader=${reader}&limit=100`)),
      );
  for (const reader of readers) {
    const got = seen.get(reader)!;
    t.equal(got.length, stored + sent, `${reader}: nothing doubled`);
    t.equal(new Set(got).size, stored + sent, `${reader}: nothing lost`);
  }
});

t.test('inbox: a later since first, then the messages before it; the read ranges merge', async (t) => {
  // 10 ms apart: a since (milliseconds) falls between two of them.
  const base = Date.now();
  await systemDb()
    .insertInto('bridge_messages')
    .values(
      Array.from({ length: 6 }, (_, i) => ({
        sender: 'atlas-main',
        channel: 'general' as const,
        priority: 'normal' as const,
        content: `note ${i}`,
        created_at: new Date(base + 10 * i),
      })),
    )
    .execute();
  const at = async (content: string) => {
    const { created_at } = await systemDb()
      .selectFrom('bridge_messages')
      .select('created_at')
      .where('content', '=', content)
      .executeTakeFirstOrThrow();
    return `since=${encodeURIComponent(created_at.toISOString())}`;
  };
  const notes = (page: { messages: { content: string }[] }) => page.messages.map((m) => m.content);
  // The channel holds other tests' messages: "since note 0" stands for the whole window here.
  const [first, third] = [await at('note 0'), await at('note 3')];
  t.same(notes(await inbox(`channel=general&reader=dora&limit=2&${third}`)), ['note 3', 'note 4']);
  t.same(
    notes(await inbox(`channel=general&reader=dora&limit=2&${first}`)),
    ['note 0', 'note 1'],
    'oldest first: the stretch before the later since',
  );
  t.same(
    notes(await inbox(`channel=general&reader=dora&${first}`)),
    ['note 2', 'note 5'],
    'jumps over what the later since read',
  );
  t.same(notes(await inbox(`channel=general&reader=dora&${first}`)), []);
  const ranges = await systemDb()
    .selectFrom('bridge_read_ranges')
    .selectAll()
    .where('channel', '=', 'general')
    .where('reader', '=', 'dora')
    .execute();
  t.equal(ranges.length, 1, 'one range covers everything read');
  await send({ sender: 'atlas-main', content: 'note 6', channel: 'general' });
  t.same(
    notes(await inbox(`channel=general&reader=dora&${first}`)),
    ['note 6'],
    'a message sent after the range is unread',
  );
});

t.test('inbox: a since neither JavaScript nor PostgreSQL can hold is a 400, and marks nothing read', async (t) => {
  const rangesBefore = await systemDb()
    .selectFrom('bridge_read_ranges')
    .selectAll()
    .where('reader', '=', 'erin')
    .execute();
  for (const since of [
    '2026-06-30T23:59:60Z',
    '0000-01-01T00:00:00Z',
    '0001-01-01T00:00:00+01:00',
    '2026-01-01T00:00:00+16:00',
    '2026-02-29T00:00:00Z',
    '10000-01-01T00:00:00Z',
    '+010000-01-01T00:00:00Z',
    '294277-01-01T00:00:00Z',
    '-271821-04-21T00:00:00Z',
    'NaN',
    '1700000000000',
  ]) {
    const res = await app.inject({
      method: 'GET',
      url: `/api/bridge/inbox?reader=erin&since=${encodeURIComponent(since)}`,
      headers: service(),
    });
    t.equal(res.statusCode, 400, since);
    t.match(res.json(), { error: /since/ }, since);
  }
  t.same(
    await systemDb().selectFrom('bridge_read_ranges').selectAll().where('reader', '=', 'erin').execute(),
    rangesBefore,
    'nothing marked read',
  );
  // The edges that both hold are fine: year 1 and year 9999, a leap day, an offset of 15:59.
  for (const since of [
    '0001-01-01T00:00:00Z',
    '9999-12-31T23:59:59.999Z',
    '2024-02-29T12:00:00Z',
    '2026-01-01T00:00:00+15:59',
  ]) {
    const res = await app.inject({
      method: 'GET',
      url: `/api/bridge/inbox?since=${encodeURIComponent(since)}`,
      headers: service(),
    });
    t.equal(res.statusCode, 200, since);
  }
});

t.test("a channel's messages are stored in order: a late or older created_at goes after the latest", async (t) => {
  const latest = await systemDb()
    .insertInto('bridge_messages')
    .values({
      sender: 'atlas-main',
      channel: 'tasks',
      priority: 'normal',
      content: 'order a',
      created_at: new Date(Date.now() + 3600_000),
    })
    .returning('created_at')
    .executeTakeFirstOrThrow();
  const older = await systemDb()
    .insertInto('bridge_messages')
    .values({
      sender: 'atlas-main',
      channel: 'tasks',
      priority: 'normal',
      content: 'order b',
      created_at: new Date(Date.now() - 3600_000),
    })
    .returning('created_at')
    .executeTakeFirstOrThrow();
  t.equal(older.created_at.getTime(), latest.created_at.getTime(), 'not an hour back: right after the latest');
  const [placed] = (
    await sql<{
      gap: string;
    }>`select (b.created_at - a.created_at)::text as gap from bridge_messages a, bridge_messages b where a.content = 'order a' and b.content = 'order b'`.execute(
      systemDb(),
    )
  ).rows;
  t.equal(placed?.gap, '00:00:00.000001');
  await t.rejects(
    systemDb()
      .updateTable('bridge_messages')
      .set({ created_at: new Date() })
      .where('content', '=', 'order a')
      .execute(),
    /keeps its channel and created_at/,
  );
  await t.rejects(
    systemDb()
      .transaction()
      .setIsolationLevel('repeatable read')
      .execute((trx) =>
        trx
          .insertInto('bridge_messages')
          .values({ sender: 'atlas-main', channel: 'tasks', priority: 'normal', content: 'order c' })
          .execute(),
      ),
    /read committed/,
  );
  await systemDb().deleteFrom('bridge_messages').where('content', 'in', ['order a', 'order b']).execute();
});

t.test(
  'inbox pages: a cursor continues after the page before, for every reader, while messages keep arriving',
  async (t) => {
    await systemDb().deleteFrom('bridge_read_ranges').where('channel', '=', 'alerts').execute();
    await systemDb().deleteFrom('bridge_messages').where('channel', '=', 'alerts').execute();
    const post = (content: string) => send({ sender: 'atlas-main', channel: 'alerts', content });
    for (let i = 0; i < 7; i++) await post(`page ${i}`);
    let added = 7;
    const contents = (page: { messages: { content: string }[] }) => page.messages.map((m) => m.content);
    const walked = await walkPages(
      async (cursor) => {
        const page = await inbox(`channel=alerts&limit=3${cursor ? `&cursor=${cursor}` : ''}`);
        return { items: contents(page), nextCursor: page.nextCursor };
      },
      async () => {
        await post(`page ${added++}`);
      },
    );
    t.same(
      walked.map((p) => p.length),
      [3, 3, 3],
      'reader unknown: the messages sent meanwhile come last, in order',
    );
    t.same(
      walked.flat(),
      Array.from({ length: 9 }, (_, i) => `page ${i}`),
      'each once, none skipped',
    );
    t.equal((await inbox('channel=alerts&limit=9')).nextCursor, null, 'a page that holds the rest has no next');

    const first = await inbox('channel=alerts&reader=erin&limit=4');
    t.same(contents(first), ['page 0', 'page 1', 'page 2', 'page 3']);
    t.type(first.nextCursor, 'string');
    const second = await inbox('channel=alerts&reader=erin&limit=4');
    t.same(
      contents(second),
      ['page 4', 'page 5', 'page 6', 'page 7'],
      'a marking reader goes on without the cursor too',
    );
    const last = await inbox(`channel=alerts&reader=erin&limit=4&cursor=${second.nextCursor}`);
    t.same([contents(last), last.nextCursor], [['page 8'], null]);

    for (const cursor of malformedCursors()) {
      const res = await app.inject({
        method: 'GET',
        url: `/api/bridge/inbox?channel=alerts&reader=frank&cursor=${encodeURIComponent(cursor)}`,
        headers: service(),
      });
      t.equal(res.statusCode, 400, cursor);
    }
    t.equal((await inbox('channel=alerts&reader=frank&limit=100')).count, 9, 'a refused cursor marked nothing read');
  },
);

t.test('health', async (t) => {
  const res = await app.inject({ method: 'GET', url: '/api/bridge/health', headers: service() });
  t.equal(res.statusCode, 200);
  t.match(res.json(), {
    status: /^ok$/,
    total_messages: Number,
    last_message: { sender: String, channel: String, created_at: String },
    channels: [/^general$/, /^tasks$/, /^alerts$/],
    senders: [/^atlas-main$/, /^atlas-agentyard$/, /^ops-desk$/],
  });
});
