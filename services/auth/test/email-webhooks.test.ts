import t from 'tap';
import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { identityHeaders, systemDb, uniqueEmail } from '@agentyard/testing';
import { build } from './helper.ts';

const KEY = randomBytes(24);
const SECRET = `whsec_${KEY.toString('base64')}`;

/** Signs like Svix (as Resend uses it): HMAC-SHA256 over `{id}.{timestamp}.{body}`. */
function signed(body: string, options: { id?: string; timestamp?: number; key?: Buffer } = {}) {
  const id = options.id ?? `msg_${randomUUID()}`;
  const timestamp = String(options.timestamp ?? Math.floor(Date.now() / 1000));
  const signature = createHmac('sha256', options.key ?? KEY)
    .update(`${id}.${timestamp}.${body}`)
    .digest('base64');
  return {
    'svix-id': id,
    'svix-timestamp': timestamp,
    'svix-signature': `v1,${signature}`,
    'content-type': 'application/json',
  };
}

t.test('signed events are stored once by id; a bounce or complaint suppresses the address', async (t) => {
  const app = await build(t, { EMAIL_WEBHOOK_SECRET: SECRET });
  const bounced = uniqueEmail('bounce').toLowerCase();
  const deliver = (body: string, headers: Record<string, string>) =>
    app.inject({
      method: 'POST',
      url: '/api/webhooks/email',
      headers: { ...identityHeaders(), ...headers },
      payload: body,
    });

  for (const type of ['email.sent', 'email.delivered', 'email.opened', 'email.clicked', 'email.received']) {
    const body = JSON.stringify({
      type,
      created_at: new Date().toISOString(),
      data: { email_id: randomUUID(), to: [uniqueEmail()] },
    });
    const res = await deliver(body, signed(body));
    t.equal(res.statusCode, 200, type);
    t.same(res.json(), { received: true, duplicate: false });
  }
  t.equal(
    (
      await systemDb()
        .selectFrom('email_suppressions')
        .select('address')
        .where('reason', 'in', ['sent', 'delivered', 'opened', 'clicked', 'received'])
        .execute()
    ).length,
    0,
    'ordinary events suppress nothing',
  );

  const body = JSON.stringify({
    type: 'email.bounced',
    created_at: new Date().toISOString(),
    data: { email_id: randomUUID(), to: [`Someone <${bounced.toUpperCase()}>`] },
  });
  const headers = signed(body);
  t.same((await deliver(body, headers)).json(), { received: true, duplicate: false });
  t.same(
    (await deliver(body, headers)).json(),
    { received: true, duplicate: true },
    'a redelivery is acknowledged once more, not stored twice',
  );
  const stored = await systemDb().selectFrom('email_events').selectAll().where('id', '=', headers['svix-id']).execute();
  t.equal(stored.length, 1);
  t.same(stored[0]!.addresses, [bounced]);
  t.has(
    await systemDb().selectFrom('email_suppressions').selectAll().where('address', '=', bounced).executeTakeFirst(),
    { reason: 'bounced' },
  );

  const complained = uniqueEmail('complaint').toLowerCase();
  const complaint = JSON.stringify({ type: 'email.complained', data: { to: complained } });
  await deliver(complaint, signed(complaint));
  t.has(
    await systemDb().selectFrom('email_suppressions').selectAll().where('address', '=', complained).executeTakeFirst(),
    { reason: 'complained' },
  );
});

t.test('unsigned, mis-signed, stale or altered deliveries are 401 and store nothing', async (t) => {
  const app = await build(t, { EMAIL_WEBHOOK_SECRET: SECRET });
  const address = uniqueEmail('forged').toLowerCase();
  const body = JSON.stringify({ type: 'email.bounced', data: { to: [address] } });
  const good = signed(body);
  const cases: [string, Record<string, string>, string][] = [
    ['no signature headers', { 'content-type': 'application/json' }, body],
    ['another key', signed(body, { key: randomBytes(24) }), body],
    ['ten minutes old', signed(body, { timestamp: Math.floor(Date.now() / 1000) - 600 }), body],
    ['body altered after signing', good, body.replace('bounced', 'complained')],
    ['id altered after signing', { ...good, 'svix-id': 'msg_other' }, body],
  ];
  for (const [name, headers, payload] of cases) {
    const res = await app.inject({
      method: 'POST',
      url: '/api/webhooks/email',
      headers: { ...identityHeaders(), ...headers },
      payload,
    });
    t.equal(res.statusCode, 401, name);
    t.same(res.json(), { error: 'Invalid webhook signature' }, name);
  }
  t.notOk(
    await systemDb()
      .selectFrom('email_suppressions')
      .select('address')
      .where('address', '=', address)
      .executeTakeFirst(),
  );
});

t.test('without a signing secret the receiver refuses with 503', async (t) => {
  const app = await build(t, { EMAIL_WEBHOOK_SECRET: '' });
  const body = JSON.stringify({ type: 'email.sent', data: {} });
  const res = await app.inject({
    method: 'POST',
    url: '/api/webhooks/email',
    headers: { ...identityHeaders(), ...signed(body) },
    payload: body,
  });
  t.equal(res.statusCode, 503);
});
