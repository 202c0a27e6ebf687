import { decodeCursor, pageOf, pastPosition, positionAt, sql, type UserTx } from '@agentyard/db';
import type { Queue } from '@agentyard/queue';
import { SchedulerErrors } from '../errors.ts';
import { checkHeartbeatInterval, type SchedulingCaller, type SchedulingLimits } from './firing-limits.ts';
import { DEFAULT_FREQUENCY, frequencyMs } from './frequency.ts';
import { scheduleHeartbeat, unscheduleHeartbeat, type DeliveryPolicy } from './timers.ts';
import type { Static } from 'typebox';
import type { HeartbeatSaveBody } from '@agentyard/proto-schemas';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** The agent is the user's in the agent table, or is the user's runtime instance id. */
async function ownedAgent(trx: UserTx, userId: string, agentRef: string): Promise<{ agentId: string | null }> {
  if (UUID.test(agentRef)) {
    const agent = await trx.selectFrom('agents').select('id').where('id', '=', agentRef).executeTakeFirst();
    if (agent) return { agentId: agent.id };
  }
  const user = await trx.selectFrom('users').select('runtime_instance_id').where('id', '=', userId).executeTakeFirst();
  if (user?.runtime_instance_id && user.runtime_instance_id === agentRef) return { agentId: null };
  throw SchedulerErrors.agentNotFound();
}

export async function readHeartbeat(trx: UserTx, agentRef: string) {
  const row = await trx.selectFrom('heartbeats').selectAll().where('agent_ref', '=', agentRef).executeTakeFirst();
  if (!row)
    return {
      frequency: DEFAULT_FREQUENCY,
      enabled: true,
      lastHeartbeat: null,
      nextHeartbeat: null,
      lastStatus: null,
      lastError: null,
    };
  return {
    frequency: row.frequency,
    enabled: row.enabled,
    lastHeartbeat: iso(row.last_heartbeat),
    nextHeartbeat: iso(row.next_heartbeat),
    lastStatus: row.last_status,
    lastError: row.last_error,
  };
}

/** One page of an agent's heartbeat runs, newest due time first: (due_at, id) descending; 404 unless the agent is the caller's. */
export async function listHeartbeatRuns(
  trx: UserTx,
  userId: string,
  agentRef: string,
  page: { limit: number; cursor?: string },
) {
  const after = page.cursor === undefined ? null : decodeCursor(page.cursor, 'uuid');
  if (page.cursor !== undefined && !after) throw SchedulerErrors.invalidCursor();
  await ownedAgent(trx, userId, agentRef);
  let query = trx
    .selectFrom('heartbeat_runs')
    .selectAll()
    .select(positionAt('due_at').as('page_at'))
    .where('agent_ref', '=', agentRef);
  if (after) query = query.where(pastPosition('due_at', 'id', after, 'desc', 'uuid'));
  const rows = await query
    .orderBy('due_at', 'desc')
    .orderBy('id', 'desc')
    .limit(page.limit + 1)
    .execute();
  const { rows: runs, nextCursor } = pageOf(rows, page.limit, (row) => ({ at: row.page_at, id: row.id }));
  return {
    runs: runs.map((row) => ({
      id: row.id,
      dueAt: row.due_at.toISOString(),
      startedAt: iso(row.started_at),
      finishedAt: iso(row.finished_at),
      status: row.status,
      error: row.error,
    })),
    nextCursor,
  };
}

export async function saveHeartbeat(
  trx: UserTx,
  caller: SchedulingCaller,
  { timers, limits }: { timers: { queue: Queue; policy: DeliveryPolicy }; limits: SchedulingLimits },
  input: Static<typeof HeartbeatSaveBody>,
) {
  const { userId } = caller;
  const { agentId } = await ownedAgent(trx, userId, input.agentId);
  const frequency = input.frequency ?? DEFAULT_FREQUENCY;
  const everyMs = frequencyMs(frequency);
  await checkHeartbeatInterval(trx, caller, limits, frequency, everyMs);
  const enabled = input.enabled ?? true;
  const next = enabled ? new Date(Date.now() + everyMs) : null;
  const values = { frequency, enabled, next_heartbeat: next, agent_id: agentId, last_error: null };
  const row = await trx
    .insertInto('heartbeats')
    .values({ user_id: userId, agent_ref: input.agentId, ...values })
    .onConflict((oc) => oc.columns(['user_id', 'agent_ref']).doUpdateSet({ ...values, updated_at: sql`now()` }))
    .returningAll()
    .executeTakeFirstOrThrow();
  const beat = { userId, agentRef: input.agentId };
  if (next) await scheduleHeartbeat(timers.queue, beat, everyMs, next, timers.policy);
  else await unscheduleHeartbeat(timers.queue, beat);
  return {
    frequency: row.frequency,
    enabled: row.enabled,
    lastHeartbeat: iso(row.last_heartbeat),
    nextHeartbeat: iso(row.next_heartbeat),
    lastStatus: row.last_status,
    lastError: row.last_error,
    lastUpdated: row.updated_at.toISOString(),
  };
}

export async function removeHeartbeat(trx: UserTx, userId: string, queue: Queue, agentRef: string): Promise<void> {
  await trx.deleteFrom('heartbeats').where('agent_ref', '=', agentRef).execute();
  await unscheduleHeartbeat(queue, { userId, agentRef });
}
