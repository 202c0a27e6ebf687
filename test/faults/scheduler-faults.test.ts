import t from 'tap';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { parseKeyring } from '@agentyard/crypto';
import { sql } from '@agentyard/db';
import { createSystemDb } from '@agentyard/db/system';
import { createQueues, QUEUES } from '@agentyard/queue';
import {
  migratedDatabase,
  seedMinuteTasks,
  startHooksStandIn,
  startPrivatePostgres,
  startPrivateRedis,
} from '@agentyard/testing';
import {
  CRON_FIRING_JOB,
  cronTimerId,
  PROMPT_BATCH_JOB,
  PROMPT_RETRY_JOB,
} from '../../services/scheduler/src/domain/timers.ts';
import { schedulerWorkerEnv, startSchedulerWorker } from './scheduler-worker.ts';

// Issue 31, "nothing lost, nothing twice": 1,000 scheduled prompts fire every minute (real cron
// minutes) from a real scheduler worker process to agents' hooks stand-ins, and in each of three
// minutes a fault strikes mid-firing, once the agents have taken 300 of the minute's prompts:
// the worker is SIGKILLed (another is started), Redis restarts (append-only file, as the production
// compose runs it), PostgreSQL restarts. Then every due time of every task must be accounted for
// exactly once: one run row per task and due time, delivered (the agent got it once), or missed /
// ran-late by the task's missedRunPolicy (half the tasks `skip`, half `run-once`), or, for a prompt
// in flight when its worker died, recorded as not sent again (the agent got it at most once). No
// agent gets a prompt more often than its runs say, no due time is left without a settled row.
// PostgreSQL and Redis are private to this file (the machine's are shared with parallel test files).
// The container engine is not restarted: a running agent is reached over HTTP at its gateway URL,
// so the engine's API is not on the delivery path (docs/scheduling.md, "Faults tried").
t.setTimeout(600_000);

const TASKS = 1000;
const MINUTE = 60_000;
/** The fault strikes once the agents have taken this many of the minute's prompts: mid-firing. */
const FAULT_AFTER = 300;
/** The outcome a prompt in flight when its worker died is recorded with (prompt-firings.ts). */
const NOT_SENT_AGAIN = /not sent again/;

const postgres = await startPrivatePostgres();
t.teardown(() => postgres.stop());
const redis = await startPrivateRedis();
t.teardown(() => redis.stop());
const urls = await migratedDatabase(postgres.adminUrl, 'agentyard_faults');
const hooksToken = randomBytes(24).toString('base64url');
// Agents take a moment to accept a turn, so a firing's deliveries are in flight when the fault strikes.
const agents = await startHooksStandIn({ token: hooksToken, acceptAfterMs: 20 });
t.teardown(() => agents.close());
const db = createSystemDb(urls.DATABASE_SYSTEM_URL, { max: 2, allowExitOnIdle: true });
t.teardown(() => db.destroy());
const prefix = `faults-${randomBytes(4).toString('hex')}`;
const queues = createQueues({ redisUrl: redis.url, prefix });
t.teardown(() => queues.close());
const encryptionKeys = `f1:${randomBytes(32).toString('base64')}`;

const workerEnv = schedulerWorkerEnv({
  urls,
  redisUrl: redis.url,
  prefix,
  encryptionKeys,
  env: { SCHEDULER_RETRY_DELAY_MS: '1000' },
});
let worker: ChildProcess | undefined;
const stopping = new Set<ChildProcess>();
/** Set when a worker process ends that the suite did not stop (a fault it did not survive). */
let workerDied: string | undefined;
let onWorkerDeath: () => void = () => {};
const workerDeath = new Promise<void>((resolve) => {
  onWorkerDeath = resolve;
});
const startWorker = () =>
  startSchedulerWorker(workerEnv, queues, (child, code, signal) => {
    if (stopping.has(child)) return;
    workerDied = `the scheduler worker exited by itself (${signal ?? code})`;
    onWorkerDeath();
  });
async function stopWorker(signal: NodeJS.Signals): Promise<void> {
  const child = worker;
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  stopping.add(child);
  child.kill(signal);
  await exited;
}
t.teardown(() => stopWorker('SIGKILL'));

/** How many of the tasks' runs due at `due` are settled (any status but `pending`); null while PostgreSQL is away. */
async function settledAt(due: number): Promise<number | null> {
  try {
    const { rows } = await sql<{
      n: string;
    }>`select count(*) as n from scheduled_task_runs where due_at = ${new Date(due)} and status <> 'pending'`.execute(
      db,
    );
    return Number(rows[0]!.n);
  } catch {
    return null;
  }
}
/** Resolves when every task's run due at `due` is settled, or false at `deadline`. */
async function untilSettled(due: number, deadline: number): Promise<boolean> {
  while (Date.now() < deadline && !workerDied) {
    if ((await settledAt(due)) === TASKS) return true;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return false;
}

// The first due minute leaves the worker time to start and reconcile its job scheduler.
const firstDue = Math.ceil((Date.now() + 15_000) / MINUTE) * MINUTE;
const { taskIds } = await seedMinuteTasks(db, {
  tasks: TASKS,
  agents: 50,
  gatewayUrl: agents.url,
  hooksToken,
  keyring: parseKeyring(encryptionKeys),
  firstDue: new Date(firstDue),
  policies: ['skip', 'run-once'],
});
worker = await startWorker();

interface Fault {
  name: string;
  inject(): Promise<void>;
}
const faults: Fault[] = [
  {
    name: 'scheduler worker SIGKILLed, another started',
    async inject() {
      await stopWorker('SIGKILL');
      worker = await startWorker();
    },
  },
  { name: 'Redis restarted (append-only file)', inject: () => redis.restart() },
  { name: 'PostgreSQL restarted', inject: () => postgres.restart() },
];
const dues = faults.map((_, i) => firstDue + i * MINUTE);
const recoveries: Promise<{ due: number; injectMs: number; recoveryMs: number | null }>[] = [];
for (const [i, fault] of faults.entries()) {
  await Promise.race([agents.received(FAULT_AFTER, dues[i]!), workerDeath]);
  if (workerDied) break;
  const start = Date.now();
  await fault.inject();
  const injectMs = Date.now() - start;
  // Settled within five minutes of the fault, or never (a due time left unaccounted for).
  recoveries.push(
    untilSettled(dues[i]!, start + 5 * MINUTE).then((ok) => ({
      due: dues[i]!,
      injectMs,
      recoveryMs: ok ? Date.now() - start : null,
    })),
  );
}
const recovered = await Promise.all(recoveries);
// No more firings: the scheduler goes, and the worker finishes what it holds (SIGTERM: graceful).
const prompts = queues.get(QUEUES.scheduledPrompts);
await prompts.removeJobScheduler(cronTimerId({ cronSchedule: '* * * * *', timezone: 'UTC' }));
// A delivery a fault made fail (a PostgreSQL restart fails those it catches) is recorded failed and
// retried on its own: the worker stops once the firings and their retries have run out.
const firingJobs = new Set([CRON_FIRING_JOB, PROMPT_BATCH_JOB, PROMPT_RETRY_JOB]);
const drainedBy = Date.now() + 3 * MINUTE;
while (!workerDied && Date.now() < drainedBy) {
  const left = (await prompts.getJobs(['waiting', 'active', 'delayed', 'prioritized'])).filter(
    (job) => job && firingJobs.has(job.name),
  );
  if (!left.length) break;
  await new Promise((resolve) => setTimeout(resolve, 250));
}
await stopWorker('SIGTERM');

const runs = await db
  .selectFrom('scheduled_task_runs')
  .select(['task_id', 'due_at', 'status', 'error'])
  .where('task_id', 'in', taskIds)
  .execute();
const received = new Map<string, number>();
for (const d of agents.deliveries) received.set(d.taskId, (received.get(d.taskId) ?? 0) + 1);
// Per task: what its agent got against what its runs say it got.
let duplicates = 0;
let phantoms = 0;
let notSentAgain = 0;
let notSentAgainReached = 0;
const byTask = new Map<string, typeof runs>();
for (const run of runs) byTask.set(run.task_id, [...(byTask.get(run.task_id) ?? []), run]);
for (const id of taskIds) {
  const own = byTask.get(id) ?? [];
  const delivered = own.filter((r) => r.status === 'delivered' || r.status === 'ran-late').length;
  const unknown = own.filter((r) => r.status === 'failed' && NOT_SENT_AGAIN.test(r.error ?? '')).length;
  const got = received.get(id) ?? 0;
  notSentAgain += unknown;
  notSentAgainReached += Math.min(unknown, Math.max(0, got - delivered));
  duplicates += Math.max(0, got - delivered - unknown);
  phantoms += Math.max(0, delivered - got);
}
const figures = dues.map((due, i) => {
  const rows = runs.filter((r) => r.due_at.getTime() === due);
  const statuses: Record<string, number> = {};
  for (const r of rows) statuses[r.status] = (statuses[r.status] ?? 0) + 1;
  const { injectMs, recoveryMs } = recovered[i] ?? { injectMs: 0, recoveryMs: null };
  return {
    fault: faults[i]!.name,
    due: new Date(due).toISOString(),
    statuses,
    silentMisses: TASKS - rows.filter((r) => r.status !== 'pending').length,
    injectMs,
    recoveryMs,
  };
});
const unexpected = runs.filter(
  (r) =>
    !['delivered', 'ran-late', 'missed'].includes(r.status) &&
    !(r.status === 'failed' && NOT_SENT_AGAIN.test(r.error ?? '')),
);
for (const f of figures) {
  console.log(
    `# ${f.fault} (due ${f.due}): ${Object.entries(f.statuses)
      .map(([status, n]) => `${status} ${n}`)
      .join(
        ', ',
      )}; silent misses ${f.silentMisses}; fault took ${(f.injectMs / 1000).toFixed(1)} s; every due time settled ${f.recoveryMs === null ? 'NEVER' : `${(f.recoveryMs / 1000).toFixed(1)} s after it struck`}`,
  );
}
console.log(
  `# ${TASKS} tasks × ${dues.length} minutes: agents got ${agents.deliveries.length} prompts (refused ${agents.unauthorized}); duplicates ${duplicates}; runs recorded delivered that no agent got ${phantoms}; in flight when the worker died, not sent again ${notSentAgain} (of which had reached the agent ${notSentAgainReached})`,
);

t.test('every due time of every task is accounted for exactly once through the faults', async (t) => {
  t.equal(workerDied, undefined, 'no scheduler worker ended but the one the suite killed');
  for (const f of figures) {
    t.equal(f.silentMisses, 0, `${f.fault}: every task's run due at ${f.due} is settled`);
    t.not(f.recoveryMs, null, `${f.fault}: recovered`);
  }
  t.equal(duplicates, 0, 'no agent got a prompt more often than its runs say');
  t.equal(phantoms, 0, 'no run says delivered that its agent did not get');
  t.same(
    unexpected.map((r) => `${r.status}: ${r.error}`).slice(0, 5),
    [],
    'every run is delivered, ran-late or missed by policy, or in flight when its worker died and not sent again',
  );
  t.equal(agents.unauthorized, 0, 'every prompt carried its agent hooks token');
});
