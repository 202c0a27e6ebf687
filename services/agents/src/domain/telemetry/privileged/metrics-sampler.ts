import { sql } from '@agentyard/db';
import type { SystemDb } from '@agentyard/db/system';
import type { RuntimeDriver } from '@agentyard/runtime';

/** Statuses of agents the platform means to be running: each is sampled (uptime counts their failed samples too). */
const MEANT_TO_RUN = ['running', 'active'] as const;
const RAW_RETENTION = '7 days';
const HOURLY_RETENTION = '90 days';

/** Runs `work` over `items` with at most `limit` in flight. */
async function inTurns<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
}

export interface SamplingPass {
  sampled: number;
  running: number;
}

/**
 * One pass of the metrics worker: one stats call per agent meant to run (at most `concurrency` at
 * once), written as one batch; the hours the pass touched rolled up again; old rows pruned. A
 * container that does not answer is a sample of an agent not running (its uptime drops).
 */
export async function sampleAgentMetrics(
  db: SystemDb,
  driver: RuntimeDriver,
  concurrency: number,
): Promise<SamplingPass> {
  const agents = await db
    .selectFrom('agents')
    .select(['id', 'user_id', 'container_id'])
    .where('status', 'in', MEANT_TO_RUN)
    .where('container_id', 'is not', null)
    .execute();
  const sampledAt = new Date();
  const rows: {
    agent_id: string;
    user_id: string;
    sampled_at: Date;
    running: boolean;
    cpu_percent: number | null;
    memory_bytes: number | null;
    network_rx_bytes: number | null;
    network_tx_bytes: number | null;
  }[] = [];
  await inTurns(agents, concurrency, async (agent) => {
    const stats = await driver.stats(agent.container_id!).catch(() => null);
    rows.push({
      agent_id: agent.id,
      user_id: agent.user_id,
      sampled_at: sampledAt,
      running: stats !== null,
      cpu_percent: stats?.cpuPercent ?? null,
      memory_bytes: stats?.memoryBytes ?? null,
      network_rx_bytes: stats?.networkRxBytes ?? null,
      network_tx_bytes: stats?.networkTxBytes ?? null,
    });
  });
  // An agent deleted while its stats were read has no row to point to any more: its sample goes with it.
  if (rows.length) {
    await sql`
      insert into agent_metric_samples (agent_id, user_id, sampled_at, running, cpu_percent, memory_bytes, network_rx_bytes, network_tx_bytes)
      select s.agent_id, s.user_id, s.sampled_at, s.running, s.cpu_percent, s.memory_bytes, s.network_rx_bytes, s.network_tx_bytes
        from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) as s(agent_id uuid, user_id uuid, sampled_at timestamptz, running boolean,
             cpu_percent double precision, memory_bytes bigint, network_rx_bytes bigint, network_tx_bytes bigint)
        join agents a on a.id = s.agent_id
      on conflict (agent_id, sampled_at) do nothing`.execute(db);
  }
  await rollUpHour(db, sampledAt);
  await pruneAgentMetrics(db);
  return { sampled: rows.length, running: rows.filter((r) => r.running).length };
}

/** Recomputes the hourly row of every agent for the hour holding `at` from its raw samples (idempotent). */
export async function rollUpHour(db: SystemDb, at: Date): Promise<void> {
  await sql`
    insert into agent_metric_hours (agent_id, user_id, hour, samples, running_samples, cpu_percent, memory_bytes, network_rx_bytes, network_tx_bytes)
    select agent_id, user_id, date_trunc('hour', sampled_at), count(*), count(*) filter (where running),
           avg(cpu_percent), avg(memory_bytes)::bigint, max(network_rx_bytes), max(network_tx_bytes)
      from agent_metric_samples
     where sampled_at >= date_trunc('hour', ${at}::timestamptz) and sampled_at < date_trunc('hour', ${at}::timestamptz) + interval '1 hour'
     group by agent_id, user_id, date_trunc('hour', sampled_at)
    on conflict (agent_id, hour) do update set samples = excluded.samples, running_samples = excluded.running_samples,
      cpu_percent = excluded.cpu_percent, memory_bytes = excluded.memory_bytes,
      network_rx_bytes = excluded.network_rx_bytes, network_tx_bytes = excluded.network_tx_bytes`.execute(db);
}

/** Raw samples older than 7 days and hourly rows older than 90 go. */
export async function pruneAgentMetrics(db: SystemDb): Promise<void> {
  await sql`delete from agent_metric_samples where sampled_at < now() - ${RAW_RETENTION}::interval`.execute(db);
  await sql`delete from agent_metric_hours where hour < now() - ${HOURLY_RETENTION}::interval`.execute(db);
}
