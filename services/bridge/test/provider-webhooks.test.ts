import t from 'tap';
import { createHmac, randomUUID } from 'node:crypto';
import { sql } from '@agentyard/db';
import { createUserRow, identityHeaders, malformedCursors, systemDb, walkPages } from '@agentyard/testing';
import { build } from './helper.ts';

const secrets = {
  LIVESTREAM_WEBHOOK_SECRET: 'livestream-secret-0123456789',
  HOSTING_STATUS_WEBHOOK_SECRET: 'hosting-secret-0123456789',
};
const { app } = await build(t, secrets);
const sign = (raw: string, secret: string, t = Math.floor(Date.now() / 1000)) =>
  `t=${t},v1=${createHmac('sha256', secret).update(`${t}.${raw}`).digest('hex')}`;
const post = (url: string, raw: string, signature?: string) =>
  app.inject({
    method: 'POST',
    url,
    payload: raw,
    headers: {
      ...identityHeaders(),
      'content-type': 'application/json',
      ...(signature ? { 'x-webhook-signature': signature } : {}),
    },
  });
const stored = (id: string) => systemDb().selectFrom('webhook_events').selectAll().where('event_id', '=', id).execute();

t.test('live-stream events: verified over the raw body, stored once', async (t) => {
  const id = randomUUID();
  const raw = `{"id":"${id}", "type":"stream.started","data":{"x":1}}`;
  t.same((await post('/api/webhooks/livestream', raw, sign(raw, secrets.LIVESTREAM_WEBHOOK_SECRET))).json(), {
    received: true,
    duplicate: false,
  });
  t.same((await post('/api/webhooks/livestream', raw, sign(raw, secrets.LIVESTREAM_WEBHOOK_SECRET))).json(), {
    received: true,
    duplicate: true,
  });
  t.equal((await stored(id)).length, 1);
});

t.test('a bad, missing, stale or other-secret signature is 400 and stores nothing', async (t) => {
  const id = randomUUID();
  const raw = JSON.stringify({ id, type: 'stream.ended' });
  for (const signature of [
    undefined,
    't=1,v1=00',
    sign(raw, 'wrong-secret'),
    sign(raw, secrets.LIVESTREAM_WEBHOOK_SECRET, Math.floor(Date.now() / 1000) - 3600),
    sign(raw, secrets.HOSTING_STATUS_WEBHOOK_SECRET),
    sign(raw.replace('ended', 'ENDED'), secrets.LIVESTREAM_WEBHOOK_SECRET),
  ]) {
    const res = await post('/api/webhooks/livestream', raw, signature);
    t.equal(res.statusCode, 400);
    t.same(res.json(), { error: 'Invalid webhook signature' });
  }
  t.equal((await stored(id)).length, 0);
});

t.test('hosting-platform status feed: stored idempotently, readable with GET by an admin', async (t) => {
  const id = randomUUID();
  const raw = JSON.stringify({ id, type: 'deployment.ready', status: 'ok' });
  t.equal(
    (await post('/api/webhooks/hosting-status', raw, sign(raw, secrets.HOSTING_STATUS_WEBHOOK_SECRET))).statusCode,
    200,
  );
  t.equal(
    (await post('/api/webhooks/hosting-status', raw, sign(raw, secrets.HOSTING_STATUS_WEBHOOK_SECRET))).json()
      .duplicate,
    true,
  );
  const admin = await createUserRow();
  const feed = await app.inject({
    method: 'GET',
    url: '/api/webhooks/hosting-status',
    headers: identityHeaders({ userId: admin.id, email: admin.email, admin: true }),
  });
  t.has(feed.json().events[0], { id, type: 'deployment.ready', payload: { status: 'ok' } });
  t.equal(
    (
      await app.inject({
        method: 'GET',
        url: '/api/webhooks/hosting-status',
        headers: identityHeaders({ userId: admin.id, email: admin.email }),
      })
    ).statusCode,
    403,
  );
});

t.test('the hosting status feed pages newest first, each event once, while events arrive between pages', async (t) => {
  const admin = await createUserRow();
  const asAdmin = identityHeaders({ userId: admin.id, email: admin.email, admin: true });
  const receive = async (id: string) => {
    const raw = JSON.stringify({ id, type: 'deployment.ready' });
    t.equal(
      (await post('/api/webhooks/hosting-status', raw, sign(raw, secrets.HOSTING_STATUS_WEBHOOK_SECRET))).statusCode,
      200,
    );
  };
  // Ids with the cursor's separator in them, and several received in one instant (ordered by id).
  for (const id of ['a|1', 'b|2', 'c', 'd', 'e']) await receive(`page-${id}`);
  await systemDb()
    .updateTable('webhook_events')
    .set({ received_at: sql`'2020-01-01T00:00:00.000001Z'::timestamptz` })
    .where('event_id', 'in', ['page-b|2', 'page-c', 'page-d'])
    .execute();
  const before = (await app.inject({ method: 'GET', url: '/api/webhooks/hosting-status?limit=100', headers: asAdmin }))
    .json()
    .events.map((e: { id: string }) => e.id);
  let n = 0;
  const pages = await walkPages(
    async (cursor) => {
      const res = await app.inject({
        method: 'GET',
        url: `/api/webhooks/hosting-status?limit=2${cursor ? `&cursor=${cursor}` : ''}`,
        headers: asAdmin,
      });
      t.equal(res.statusCode, 200);
      return { items: res.json().events.map((e: { id: string }) => e.id), nextCursor: res.json().nextCursor };
    },
    async () => {
      await receive(`page-later-${n++}`);
    },
  );
  t.same(pages.flat(), before, 'every event there was at the first page, in order, each once');
  t.ok(
    before.indexOf('page-d') < before.indexOf('page-c') && before.indexOf('page-c') < before.indexOf('page-b|2'),
    'one instant: by id, descending',
  );
  for (const cursor of malformedCursors('text')) {
    t.equal(
      (
        await app.inject({
          method: 'GET',
          url: `/api/webhooks/hosting-status?cursor=${encodeURIComponent(cursor)}`,
          headers: asAdmin,
        })
      ).statusCode,
      400,
      cursor,
    );
  }
});
