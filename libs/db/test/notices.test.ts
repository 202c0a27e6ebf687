import { once, EventEmitter } from 'node:events';
import t from 'tap';
import { sql } from 'kysely';
import { listenForNotices } from '@agentyard/db';
import { systemDb } from '@agentyard/testing';

const channel = `test_notices_${process.pid}`;
const applicationName = `notices-test-${process.pid}`;
const events = new EventEmitter();
const received: string[] = [];
const listener = listenForNotices(
  process.env.DATABASE_SYSTEM_URL!,
  channel,
  {
    notice: (payload) => {
      received.push(payload);
      events.emit('notice', payload);
    },
    listening: () => events.emit('listening'),
    lost: () => events.emit('lost'),
  },
  { applicationName, retryMs: 10 },
);
t.teardown(() => listener.close());
const notify = (payload: string) => sql`select pg_notify(${channel}, ${payload})`.execute(systemDb());

t.test('notices on the channel arrive in order once listening; other channels do not', async (t) => {
  if (!listener.listening) await once(events, 'listening');
  const arrived = new Promise<void>((resolve) =>
    events.on('notice', (p) => {
      if (p === 'third') resolve();
    }),
  );
  await sql`select pg_notify(${`${channel}_other`}, 'elsewhere')`.execute(systemDb());
  await notify('first');
  await notify('second');
  await notify('third');
  await arrived;
  t.same(received, ['first', 'second', 'third']);
});

t.test('a dropped connection is reported lost, then listened to again, and notices flow again', async (t) => {
  const lost = once(events, 'lost');
  const back = once(events, 'listening');
  const { rows } = await sql<{
    ok: boolean;
  }>`select pg_terminate_backend(pid) as ok from pg_stat_activity where application_name = ${applicationName}`.execute(
    systemDb(),
  );
  t.same(
    rows.map((r) => r.ok),
    [true],
    'the listener had one connection',
  );
  await lost;
  t.equal(listener.listening, false);
  await back;
  t.equal(listener.listening, true);
  const arrived = once(events, 'notice');
  await notify('after reconnect');
  t.same(await arrived, ['after reconnect']);
});

t.test('closed, it stops listening and does not come back', async (t) => {
  const lost = once(events, 'lost');
  await listener.close();
  await lost;
  t.equal(listener.listening, false);
  const { rows } = await sql<{
    n: number;
  }>`select count(*)::int as n from pg_stat_activity where application_name = ${applicationName}`.execute(systemDb());
  t.equal(rows[0]!.n, 0);
});
