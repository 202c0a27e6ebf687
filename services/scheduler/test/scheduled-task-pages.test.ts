import t from 'tap';
import { randomBytes } from 'node:crypto';
import { sql } from '@agentyard/db';
import { malformedCursors, systemDb, walkPages } from '@agentyard/testing';
import { createQueues, QUEUES } from '@agentyard/queue';
import { build } from './helper.ts';
import { userWithAgent } from './support/agent-rows.ts';

const env = { QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}-task-pages-${randomBytes(3).toString('hex')}` };
const app = await build(t, env);
const queues = createQueues({ redisUrl: process.env.REDIS_URL!, prefix: env.QUEUE_PREFIX });
t.teardown(async () => {
  await queues.get(QUEUES.scheduledPrompts).obliterate({ force: true });
  await queues.close();
});
const user = await userWithAgent(null);
const create = async (name: string) => {
  const res = await app.inject({
    method: 'POST',
    url: '/api/scheduled-tasks',
    headers: user.headers,
    payload: { name, cronSchedule: '0 3 * * *', prompt: 'p', agentId: user.agentId },
  });
  return res.json().id as string;
};
const list = (query: string) =>
  app.inject({ method: 'GET', url: `/api/scheduled-tasks?${query}`, headers: user.headers });

t.test(
  'pages walk every task newest first, none twice, none skipped, while tasks are added between pages',
  async (t) => {
    const before: string[] = [];
    for (let i = 0; i < 7; i++) before.push(await create(`before ${i}`));
    const added: string[] = [];
    const pages = await walkPages(
      async (cursor) => {
        const res = await list(`limit=3${cursor ? `&cursor=${cursor}` : ''}`);
        t.equal(res.statusCode, 200);
        const body = res.json();
        t.equal(body.count, body.tasks.length);
        return { items: body.tasks.map((task: { id: string }) => task.id), nextCursor: body.nextCursor };
      },
      async () => {
        added.push(await create(`between ${added.length}`));
      },
    );
    t.same(
      pages.map((p) => p.length),
      [3, 3, 1],
    );
    t.same(
      pages.flat(),
      [...before].reverse(),
      'the tasks that existed at the first page, in order, each once; the new ones sort before the cursor',
    );
    const firstPage = (await list('limit=3')).json();
    t.same(
      firstPage.tasks.map((task: { id: string }) => task.id),
      [...added].reverse().concat(before.at(-1)!).slice(0, 3),
      'a fresh walk starts with the newest',
    );

    // Rows sharing one created_at (one transaction) are ordered by id, and the cursor splits them exactly.
    await systemDb()
      .updateTable('scheduled_tasks')
      .set({ created_at: sql`'2026-01-01T00:00:00.123456Z'::timestamptz` })
      .where('user_id', '=', user.userId)
      .execute();
    const tied = await walkPages(async (cursor) => {
      const body = (await list(`limit=4${cursor ? `&cursor=${cursor}` : ''}`)).json();
      return { items: body.tasks.map((task: { id: string }) => task.id), nextCursor: body.nextCursor };
    });
    const all = [...before, ...added].sort().reverse();
    t.same(tied.flat(), all, 'id descending within one timestamp');
  },
);

t.test('limit: default 50, at most 100; a malformed cursor is 400', async (t) => {
  t.equal((await list('limit=101')).statusCode, 400);
  t.equal((await list('limit=0')).statusCode, 400);
  for (const cursor of malformedCursors()) {
    const res = await list(`cursor=${encodeURIComponent(cursor)}`);
    t.equal(res.statusCode, 400, cursor);
    t.type(res.json().error, 'string');
  }
});
