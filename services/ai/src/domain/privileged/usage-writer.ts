import { scrapedGauge } from '@agentyard/observability';
import { randomUUID } from 'node:crypto';
import { sql, type Database, type Transaction } from '@agentyard/db';
import type { SystemDb } from '@agentyard/db/system';
import { lockBudgetedUsers, settleBeyondAllowance } from '../spending/usage-ledger.ts';
import type { Log } from '@agentyard/http';
import type { Attempt } from '../providers/retries.ts';

export interface UsageRecord {
  /** `demo`, the user's id, or the `x-user-id` a backend caller passed. */
  userRef: string;
  userId: string | null;
  agentId: string | null;
  model: string;
  provider: string;
  inputTokens: number;
  outputTokens: number;
  /** Prompt-cache reads and writes, each part of inputTokens (absent: none reported). */
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
  /** null: the model has no known price. */
  costUsd: number | null;
  turns: number;
  /** The plan's monthly allowance (USD) when the call drew on a budget: spend beyond it is taken from credits. */
  includedUsd?: number | null;
  /** The name of each tool the model called in its answer. */
  tools: string[];
  /** How the call was served: each provider attempt (retries and fallbacks included), and whether on the caller's own key (BYOK). */
  detail?: { attempts: Attempt[]; ownKey?: true };
  /** `failed`: every provider attempt failed, so no tokens and no cost (absent: served). */
  outcome?: 'served' | 'failed';
  /** The channel whose inbound message started the agent's turn this call served (absent: none). */
  channel?: string | null;
  at: Date;
}

/** A usage record with the id its row is written under (a retried write of it is a no-op). */
export interface PendingUsage extends UsageRecord {
  id: string;
}

/** Longest tool name kept: names come from the model's answer, so they are bounded here. */
const TOOL_NAME_MAX = 128;

export interface UsageWriterOptions {
  flushMs: number;
  batchSize: number;
  bufferLimit: number;
  log: Pick<Log, 'error' | 'warn'>;
}

/**
 * Usage rows are buffered and written in batches (one multi-row insert and one upsert per daily
 * aggregate per batch), never one insert per request. Each row carries its own id and only newly
 * inserted rows feed the daily aggregates, so a batch retried after a failure never counts twice.
 */
/** The writers of this process, whose buffers Prometheus reads as one depth. */
const writers = new Set<UsageWriter>();
scrapedGauge('usage_writer_buffer_depth', 'Usage rows buffered and not yet written', [], async () => [
  [{}, [...writers].reduce((sum, w) => sum + w.depth, 0)],
]);

export class UsageWriter {
  private buffer: PendingUsage[] = [];
  private flushing: Promise<void> | null = null;
  private readonly timer: NodeJS.Timeout;
  private readonly db: SystemDb;
  private readonly options: UsageWriterOptions;

  constructor(db: SystemDb, options: UsageWriterOptions) {
    this.db = db;
    this.options = options;
    this.timer = setInterval(() => {
      void this.flush();
    }, options.flushMs);
    this.timer.unref();
    writers.add(this);
  }

  get depth(): number {
    return this.buffer.length;
  }

  record(record: UsageRecord): void {
    this.buffer.push({ ...record, tools: record.tools.map((name) => name.slice(0, TOOL_NAME_MAX)), id: randomUUID() });
    if (this.buffer.length > this.options.bufferLimit) {
      const dropped = this.buffer.splice(0, this.buffer.length - this.options.bufferLimit);
      this.options.log.error({ dropped: dropped.length }, 'usage buffer full: oldest usage rows dropped');
    }
    if (this.buffer.length >= this.options.batchSize) void this.flush();
  }

  /** Cost of `userRef`'s rows not yet written, for spend checks that must not lag behind. */
  pendingCost(userRef: string): number {
    return this.buffer.reduce((sum, r) => sum + (r.userRef === userRef ? (r.costUsd ?? 0) : 0), 0);
  }

  /** Writes everything buffered so far (tests and shutdown await it). */
  async flush(): Promise<void> {
    while (this.flushing) await this.flushing;
    if (this.buffer.length === 0) return;
    this.flushing = this.writeAll().finally(() => {
      this.flushing = null;
    });
    await this.flushing;
  }

  async close(): Promise<void> {
    writers.delete(this);
    clearInterval(this.timer);
    await this.flush();
  }

  private async writeAll(): Promise<void> {
    while (this.buffer.length > 0) {
      const batch = this.buffer.splice(0, this.options.batchSize);
      try {
        await writeBatch(this.db, batch);
      } catch (error) {
        this.buffer.unshift(...batch);
        this.options.log.error(
          { err: { message: (error as Error).message }, rows: batch.length },
          'usage batch not written; kept for the next flush',
        );
        return;
      }
    }
  }
}

const dayOf = (at: Date) => at.toISOString().slice(0, 10);

/** Writes one batch in one transaction: the rows, then the aggregates fed by the rows newly inserted. */
export async function writeBatch(db: SystemDb, batch: PendingUsage[]): Promise<void> {
  await db.transaction().execute(async (trx) => {
    // The rows travel as one JSON parameter: building and sending a statement with a parameter per
    // value (14 per row, hundreds of rows) held the event loop for milliseconds on every flush.
    const rows = JSON.stringify(
      batch.map((r) => ({
        id: r.id,
        user_id: r.userId,
        user_ref: r.userRef,
        agent_id: r.agentId,
        model: r.model,
        provider: r.provider,
        input_tokens: r.inputTokens,
        output_tokens: r.outputTokens,
        cache_read_tokens: r.cacheReadTokens ?? 0,
        cache_write_tokens: r.cacheWriteTokens ?? 0,
        cost_usd: r.costUsd === null ? null : r.costUsd.toFixed(8),
        turn_count: r.turns,
        tool_names: r.tools,
        detail: r.detail ?? null,
        outcome: r.outcome ?? 'served',
        channel: r.channel ?? null,
        occurred_at: r.at.toISOString(),
        day: dayOf(r.at),
      })),
    );
    const { rows: written } = await sql<{ id: string }>`
      insert into usage_events (id, user_id, user_ref, agent_id, model, provider, input_tokens, output_tokens, total_tokens, cache_read_tokens, cache_write_tokens, cost_usd, turn_count, tool_names, detail, outcome, channel, occurred_at, day)
      select id, user_id, user_ref, agent_id, model, provider, input_tokens, output_tokens, input_tokens + output_tokens, cache_read_tokens, cache_write_tokens, cost_usd, turn_count, tool_names, detail, outcome, channel, occurred_at, day
      from jsonb_to_recordset(${rows}::jsonb) as r(id uuid, user_id uuid, user_ref text, agent_id text, model text, provider text,
        input_tokens integer, output_tokens integer, cache_read_tokens bigint, cache_write_tokens bigint, cost_usd numeric, turn_count integer, tool_names text[], detail jsonb, outcome text, channel text, occurred_at timestamptz, day date)
      on conflict (id) do nothing returning id`.execute(trx);
    const inserted = new Set(written.map((row) => row.id));
    const fresh = batch.filter((r) => inserted.has(r.id));
    await lockBudgetedUsers(trx, fresh);
    await addToolCalls(trx, fresh);

    const groups = new Map<
      string,
      {
        day: string;
        r: PendingUsage;
        calls: number;
        unpriced: number;
        failed: number;
        input: number;
        output: number;
        cacheRead: number;
        cacheWrite: number;
        cost: number;
        turns: number;
      }
    >();
    for (const r of fresh) {
      const day = dayOf(r.at);
      const key = JSON.stringify([day, r.userRef, r.agentId ?? '', r.model]);
      const g = groups.get(key) ?? {
        day,
        r,
        calls: 0,
        unpriced: 0,
        failed: 0,
        input: 0,
        output: 0,
        cacheRead: 0,
        cacheWrite: 0,
        cost: 0,
        turns: 0,
      };
      g.calls += 1;
      g.unpriced += r.costUsd === null ? 1 : 0;
      g.failed += r.outcome === 'failed' ? 1 : 0;
      g.input += r.inputTokens;
      g.output += r.outputTokens;
      g.cacheRead += r.cacheReadTokens ?? 0;
      g.cacheWrite += r.cacheWriteTokens ?? 0;
      g.cost += r.costUsd ?? 0;
      g.turns += r.turns;
      groups.set(key, g);
    }
    if (groups.size === 0) return;
    await trx
      .insertInto('usage_daily')
      .values(
        [...groups.values()].map((g) => ({
          day: g.day,
          user_ref: g.r.userRef,
          user_id: g.r.userId,
          agent_id: g.r.agentId ?? '',
          model: g.r.model,
          provider: g.r.provider,
          calls: g.calls,
          unpriced_calls: g.unpriced,
          failed_calls: g.failed,
          input_tokens: g.input,
          output_tokens: g.output,
          total_tokens: g.input + g.output,
          cache_read_tokens: g.cacheRead,
          cache_write_tokens: g.cacheWrite,
          cost_usd: g.cost.toFixed(8),
          turns: g.turns,
        })),
      )
      .onConflict((oc) =>
        oc.columns(['day', 'user_ref', 'agent_id', 'model']).doUpdateSet({
          calls: sql`usage_daily.calls + excluded.calls`,
          unpriced_calls: sql`usage_daily.unpriced_calls + excluded.unpriced_calls`,
          failed_calls: sql`usage_daily.failed_calls + excluded.failed_calls`,
          input_tokens: sql`usage_daily.input_tokens + excluded.input_tokens`,
          output_tokens: sql`usage_daily.output_tokens + excluded.output_tokens`,
          total_tokens: sql`usage_daily.total_tokens + excluded.total_tokens`,
          cache_read_tokens: sql`usage_daily.cache_read_tokens + excluded.cache_read_tokens`,
          cache_write_tokens: sql`usage_daily.cache_write_tokens + excluded.cache_write_tokens`,
          cost_usd: sql`usage_daily.cost_usd + excluded.cost_usd`,
          turns: sql`usage_daily.turns + excluded.turns`,
        }),
      )
      .execute();
    await settleBeyondAllowance(trx, fresh);
  });
}

/** Adds the tool calls of newly written usage rows to the per-(day, user, agent, tool) aggregate. */
async function addToolCalls(trx: Transaction<Database>, rows: PendingUsage[]): Promise<void> {
  const groups = new Map<string, { day: string; r: PendingUsage; tool: string; calls: number; answers: number }>();
  for (const r of rows) {
    const day = dayOf(r.at);
    const seen = new Set<string>();
    for (const tool of r.tools) {
      const key = JSON.stringify([day, r.userRef, r.agentId ?? '', tool]);
      const g = groups.get(key) ?? { day, r, tool, calls: 0, answers: 0 };
      g.calls += 1;
      if (!seen.has(tool)) g.answers += 1;
      seen.add(tool);
      groups.set(key, g);
    }
  }
  if (groups.size === 0) return;
  await trx
    .insertInto('usage_tools_daily')
    .values(
      [...groups.values()].map((g) => ({
        day: g.day,
        user_ref: g.r.userRef,
        user_id: g.r.userId,
        agent_id: g.r.agentId ?? '',
        tool: g.tool,
        calls: g.calls,
        answers: g.answers,
      })),
    )
    .onConflict((oc) =>
      oc.columns(['day', 'user_ref', 'agent_id', 'tool']).doUpdateSet({
        calls: sql`usage_tools_daily.calls + excluded.calls`,
        answers: sql`usage_tools_daily.answers + excluded.answers`,
      }),
    )
    .execute();
}

/** Tokens `userRef` used this calendar month (UTC), for plan quotas. */
export async function monthlyTokens(db: SystemDb, userRef: string, now = new Date()): Promise<number> {
  const start = `${now.toISOString().slice(0, 7)}-01`;
  const row = await db
    .selectFrom('usage_daily')
    .select(sql<number>`coalesce(sum(total_tokens), 0)::int8`.as('tokens'))
    .where('user_ref', '=', userRef)
    .where('day', '>=', start)
    .executeTakeFirst();
  return Number(row?.tokens ?? 0);
}

/** What the demo chat has cost today (UTC), written rows only. */
export async function demoSpendToday(db: SystemDb, now = new Date()): Promise<number> {
  const row = await db
    .selectFrom('usage_daily')
    .select(sql<string>`coalesce(sum(cost_usd), 0)`.as('cost'))
    .where('user_ref', '=', 'demo')
    .where('day', '=', dayOf(now))
    .executeTakeFirst();
  return Number(row?.cost ?? 0);
}
