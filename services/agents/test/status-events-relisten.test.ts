import { randomUUID } from 'node:crypto';
import t from 'tap';
import { sql } from 'kysely';
import { systemDb } from '@agentyard/testing';
import {
  AGENT_STATUS_CHANNEL,
  type AgentStatusEvent,
  agentStatusEvents,
} from '../src/domain/telemetry/status-events.ts';

// The status events of GET /api/events when the agents service's LISTEN connection drops: notices
// sent meanwhile are lost, so every open stream is told to read again (`ready` to its client) once
// the service listens again. Before, the streams stayed open and silent and the console's badges stale.

const applicationName = `status-events-test-${process.pid}`;
const warnings: string[] = [];
const events = agentStatusEvents(
  process.env.DATABASE_SYSTEM_URL!,
  { warn: (_obj, msg) => warnings.push(msg) },
  { applicationName },
);
t.teardown(() => events.close());

/** What the agents table's trigger sends on a status change (migration 2026_11_25_0400). */
const notifyStatus = (userId: string, agentId: string, status: string) =>
  sql`select pg_notify(${AGENT_STATUS_CHANNEL}, ${JSON.stringify({ userId, agentId, status, previousStatus: 'provisioning', at: new Date().toISOString() })})`.execute(
    systemDb(),
  );

function subscriberLog() {
  const changes: AgentStatusEvent[] = [];
  let relistens = 0;
  const waiters: (() => void)[] = [];
  const wake = () => {
    for (const w of waiters.splice(0)) w();
  };
  return {
    changes,
    get relistens() {
      return relistens;
    },
    subscriber: {
      change: (event: AgentStatusEvent) => {
        changes.push(event);
        wake();
      },
      relisten: () => {
        relistens += 1;
        wake();
      },
    },
    /** Resolves once `ready()` holds (checked on each thing the subscriber is handed). */
    until(ready: () => boolean) {
      return new Promise<void>((resolve) => {
        const check = () => (ready() ? resolve() : waiters.push(check));
        check();
      });
    },
  };
}

t.test('a dropped LISTEN connection: each stream is told to read again, then changes flow again', async (t) => {
  const owner = randomUUID();
  const other = randomUUID();
  const agentId = randomUUID();
  const mine = subscriberLog();
  const theirs = subscriberLog();
  const unsubscribeMine = await events.subscribe(owner, mine.subscriber);
  const unsubscribeTheirs = await events.subscribe(other, theirs.subscriber);

  await notifyStatus(owner, agentId, 'deploying');
  await mine.until(() => mine.changes.length === 1);
  t.has(
    mine.changes,
    [{ agentId, status: 'deploying', previousStatus: 'provisioning' }],
    "the owner's stream gets the change",
  );
  t.same(theirs.changes, [], "another user's does not");
  t.equal(mine.relistens, 0, 'no read-again while listening');

  const { rows } = await sql<{
    ok: boolean;
  }>`select pg_terminate_backend(pid) as ok from pg_stat_activity where application_name = ${applicationName}`.execute(
    systemDb(),
  );
  t.same(
    rows.map((r) => r.ok),
    [true],
    'the one LISTEN connection is cut',
  );
  await Promise.all([mine.until(() => mine.relistens === 1), theirs.until(() => theirs.relistens === 1)]);
  t.pass('every open stream is told to read again once the service listens again');
  t.ok(warnings.includes('agent status notices lost; listening again'), 'and the loss is logged');

  await notifyStatus(owner, agentId, 'running');
  await mine.until(() => mine.changes.length === 2);
  t.equal(mine.changes[1]!.status, 'running', 'changes arrive again after the reconnect');

  unsubscribeTheirs();
  unsubscribeMine();
});
