import { sql, type Transaction, type Database } from '@agentyard/db';

export type MetricsRange = '1h' | '24h' | '7d' | '30d';

/** Each range's span and bucket; 7d and 30d read the hourly rollup (raw samples are kept 7 days). */
const RANGES: Record<MetricsRange, { span: string; step: string; source: 'samples' | 'hours' }> = {
  '1h': { span: '1 hour', step: '1 minute', source: 'samples' },
  '24h': { span: '24 hours', step: '15 minutes', source: 'samples' },
  '7d': { span: '7 days', step: '1 hour', source: 'hours' },
  '30d': { span: '30 days', step: '6 hours', source: 'hours' },
};

const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));
const round = (v: number | null, places: number) => (v === null ? null : Math.round(v * 10 ** places) / 10 ** places);

/**
 * The agent's metrics over `range` (the caller's transaction: its own rows only): CPU and memory
 * from the worker's samples, messages (AI calls), errors (calls every provider attempt failed),
 * tokens and cost from the AI gateway's usage rows. A bucket with neither samples nor usage is all
 * null; one where the agent was sampled but made no call has 0 messages. Latency is null: no row
 * records it per agent yet.
 */
export async function agentMetrics(trx: Transaction<Database>, agentId: string, range: MetricsRange) {
  const { span, step, source } = RANGES[range];
  const machine =
    source === 'samples'
      ? sql`select date_bin(${step}::interval, sampled_at, 'epoch') as start, avg(cpu_percent) as cpu, avg(memory_bytes) as memory, count(*) as samples, count(*) filter (where running) as running
            from agent_metric_samples where agent_id = ${agentId} and sampled_at > now() - ${span}::interval group by 1`
      : sql`select date_bin(${step}::interval, hour, 'epoch') as start, sum(cpu_percent * samples) / nullif(sum(samples) filter (where cpu_percent is not null), 0) as cpu,
                 sum(memory_bytes * samples) / nullif(sum(samples) filter (where memory_bytes is not null), 0) as memory, sum(samples) as samples, sum(running_samples) as running
            from agent_metric_hours where agent_id = ${agentId} and hour > now() - ${span}::interval - interval '1 hour' group by 1`;
  const result = await sql<{
    start: Date;
    cpu: number | null;
    memory: string | null;
    samples: string | null;
    running: string | null;
    messages: string | null;
    errors: string | null;
    tokens: string | null;
    cost: string | null;
  }>`
    with buckets as (
      select generate_series(date_bin(${step}::interval, now() - ${span}::interval, 'epoch'), now(), ${step}::interval) as start
    ), machine as (${machine}
    ), usage as (
      select date_bin(${step}::interval, occurred_at, 'epoch') as start, count(*) as messages, count(*) filter (where outcome = 'failed') as errors, sum(total_tokens) as tokens, sum(cost_usd) as cost
        from usage_events where agent_id = ${agentId} and occurred_at > now() - ${span}::interval group by 1
    )
    select b.start, m.cpu, m.memory, m.samples, m.running,
           coalesce(u.messages, case when m.samples is not null then 0 end) as messages,
           coalesce(u.errors, case when m.samples is not null then 0 end) as errors,
           coalesce(u.tokens, case when m.samples is not null then 0 end) as tokens,
           coalesce(u.cost, case when m.samples is not null then 0 end) as cost
      from buckets b left join machine m using (start) left join usage u using (start)
     order by b.start`.execute(trx);
  const rows = result.rows;
  const points = rows.map((r) => ({
    time: new Date(r.start).toISOString(),
    cpuPercent: round(num(r.cpu), 2),
    memoryBytes: round(num(r.memory), 0),
    messages: num(r.messages),
    tokens: num(r.tokens),
    costUsd: round(num(r.cost), 8),
    errors: num(r.errors),
  }));
  const samples = rows.reduce((n, r) => n + (num(r.samples) ?? 0), 0);
  const running = rows.reduce((n, r) => n + (num(r.running) ?? 0), 0);
  return {
    agentId,
    range,
    points,
    summary: {
      uptimePercent: samples > 0 ? round((running / samples) * 100, 2) : null,
      p50LatencyMs: null,
      p95LatencyMs: null,
      messages: points.reduce((n, p) => n + (p.messages ?? 0), 0),
      costUsd:
        round(
          points.reduce((n, p) => n + (p.costUsd ?? 0), 0),
          8,
        ) ?? 0,
    },
  };
}
