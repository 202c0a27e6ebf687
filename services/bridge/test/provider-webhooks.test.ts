import t from 'tap';
import { createHmac, randomUUID } from 'node:crypto';
import { createUserRow, identityHeaders, systemDb } from '@agentyard/testing';
import { build } from './helper.ts';

const secrets = { LIVESTREAM_WEBHOOK_SECRET: 'livestream-secret-0123456789', HOSTING_STATUS_WEBHOOK_SECRET: 'hosting-secret-0123456789' };
const { app } = await build(t, secrets);
const sign = (raw: string, secret: string, t = Math.floor(Date.now() / 1000)) => `t=${t},v1=${createHmac('sha256', secret).update(`${t}.${raw}`).digest('hex')}`;
const post = (url: string, raw: string, signature?: string) => app.inject({
  method: 'POST', url, payload: raw,
  headers: { ...identityHeaders(), 'content-type': 'application/json', ...(signature ? { 'x-webhook-signature': signature } : {}) },
});
const stored = (id: string) => systemDb().selectFrom('webhook_events').selectAll().where('event_id', '=', id).execute();

t.test('live-stream events: verified over the raw body, stored once', async (t) => {
  const id = randomUUID();
  const raw = `{"id":"${id}", "type":"stream.started","data":{"x":1}}`;
  t.same((await post('/api/webhooks/livestream', raw, sign(raw, secrets.LIVESTREAM_WEBHOOK_SECRET))).json(), { received: true, duplicate: false });
  t.same((await post('/api/webhooks/livestream', raw, sign(raw, secrets.LIVESTREAM_WEBHOOK_SECRET))).json(), { received: true, duplicate: true });
  t.equal((await stored(id)).length, 1);
});

t.test('a bad, missing, stale or other-secret signature is 400 and stores nothing', async (t) => {
  const id = randomUUID();
  const raw = JSON.stringify({ id, type: 'stream.ended' });
  for (const signature of [undefined, 't=1,v1=00', sign(raw, 'wrong-secret'), sign(raw, secrets.LIVESTREAM_WEBHOOK_SECRET, Math.floor(Date.now() / 1000) - 3600), sign(raw, secrets.HOSTING_STATUS_WEBHOOK_SECRET), sign(raw.replace('ended', 'ENDED'), secrets.LIVESTREAM_WEBHOOK_SECRET)]) {
    const res = await post('/api/webhooks/livestream', raw, signature);
    t.equal(res.statusCode, 400);
    t.same(res.json(), { error: 'Invalid webhook signature' });
  }
  t.equal((await stored(id)).length, 0);
});

t.test('hosting-platform status feed: stored idempotently, readable with GET by an admin', async (t) => {
  const id = randomUUID();
  const raw = JSON.stringify({ id, type: 'deployment.ready', status: 'ok' });
  t.equal((await post('/api/webhooks/hosting-status', raw, sign(raw, secrets.HOSTING_STATUS_WEBHOOK_SECRET))).statusCode, 200);
  t.equal((await post('/api/webhooks/hosting-status', raw, sign(raw, secrets.HOSTING_STATUS_WEBHOOK_SECRET))).json().duplicate, true);
  const admin = await createUserRow();
  const feed = await app.inject({ method: 'GET', url: '/api/webhooks/hosting-status', headers: identityHeaders({ userId: admin.id, email: admin.email, admin: true }) });
  t.match(feed.json().events[0], { id, type: 'deployment.ready', payload: { status: 'ok' } });
  t.equal((await app.inject({ method: 'GET', url: '/api/webhooks/hosting-status', headers: identityHeaders({ userId: admin.id, email: admin.email }) })).statusCode, 403);
});
