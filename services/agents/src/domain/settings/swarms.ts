import { sql, type Database, type SwarmRunMode, type Transaction } from '@agentyard/db';
import { swarmLimitsOf } from '@agentyard/proto-schemas';
import { FleetErrors } from '../../errors.ts';

/**
 * Swarms (issue 32): a named group of the user's own agents, read and written in the user's
 * transaction (row-level security: another user's agent or swarm is simply not there, so 404).
 * A run is its rows (one per member, pending) committed before its job is queued; the job fills them.
 */

type Trx = Transaction<Database>;

/** The `swarm-runs` queue's one job: run `runId`. Its job id is the run's, so a run is queued once. */
export const SWARM_RUN_JOB = 'swarm-run';
export interface SwarmRunJob {
  runId: string;
}
export const swarmRunJobId = (runId: string) => `swarm-run-${runId}`;

async function membersOf(trx: Trx, swarmIds: string[]): Promise<Map<string, string[]>> {
  const members = new Map<string, string[]>(swarmIds.map((id) => [id, []]));
  if (!swarmIds.length) return members;
  const rows = await trx
    .selectFrom('swarm_members')
    .select(['swarm_id', 'agent_id'])
    .where('swarm_id', 'in', swarmIds)
    .orderBy('swarm_id')
    .orderBy('position')
    .execute();
  for (const row of rows) members.get(row.swarm_id)?.push(row.agent_id);
  return members;
}

const swarmView = (row: { id: string; name: string; created_at: Date; updated_at: Date }, agentIds: string[]) => ({
  id: row.id,
  name: row.name,
  agentIds,
  createdAt: row.created_at.toISOString(),
  updatedAt: row.updated_at.toISOString(),
});

export async function listSwarms(trx: Trx) {
  const rows = await trx
    .selectFrom('swarms')
    .select(['id', 'name', 'created_at', 'updated_at'])
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  const members = await membersOf(
    trx,
    rows.map((r) => r.id),
  );
  return rows.map((row) => swarmView(row, members.get(row.id) ?? []));
}

export async function getSwarm(trx: Trx, id: string) {
  const row = await trx
    .selectFrom('swarms')
    .select(['id', 'name', 'created_at', 'updated_at'])
    .where('id', '=', id)
    .executeTakeFirst();
  if (!row) throw FleetErrors.swarmNotFound();
  return swarmView(row, (await membersOf(trx, [id])).get(id) ?? []);
}

/** Every agent named is the user's own (else 404 naming none of them) and the plan allows that many members. */
async function checkMembers(trx: Trx, plan: string, agentIds: string[]): Promise<void> {
  const limit = swarmLimitsOf(plan).members;
  if (agentIds.length > limit) throw FleetErrors.memberLimit(limit);
  const owned = await trx.selectFrom('agents').select('id').where('id', 'in', agentIds).execute();
  if (owned.length !== agentIds.length) throw FleetErrors.memberNotFound();
}

async function setMembers(trx: Trx, userId: string, swarmId: string, agentIds: string[]): Promise<void> {
  await trx.deleteFrom('swarm_members').where('swarm_id', '=', swarmId).execute();
  await trx
    .insertInto('swarm_members')
    .values(agentIds.map((agentId, position) => ({ swarm_id: swarmId, agent_id: agentId, user_id: userId, position })))
    .execute();
}

export async function createSwarm(trx: Trx, userId: string, plan: string, input: { name: string; agentIds: string[] }) {
  // One user's swarm writes take turns, so two at once cannot both pass the limit.
  await sql`select pg_advisory_xact_lock(hashtext('swarms:' || ${userId}))`.execute(trx);
  const limit = swarmLimitsOf(plan).swarms;
  const { n } = await trx.selectFrom('swarms').select(sql<string>`count(*)`.as('n')).executeTakeFirstOrThrow();
  if (Number(n) >= limit) throw FleetErrors.swarmLimit(limit);
  await checkMembers(trx, plan, input.agentIds);
  const row = await trx
    .insertInto('swarms')
    .values({ user_id: userId, name: input.name })
    .returning('id')
    .executeTakeFirstOrThrow();
  await setMembers(trx, userId, row.id, input.agentIds);
  return getSwarm(trx, row.id);
}

export async function updateSwarm(
  trx: Trx,
  userId: string,
  plan: string,
  id: string,
  input: { name?: string; agentIds?: string[] },
) {
  await getSwarm(trx, id);
  if (input.agentIds) {
    await checkMembers(trx, plan, input.agentIds);
    await setMembers(trx, userId, id, input.agentIds);
  }
  await trx
    .updateTable('swarms')
    .set({ updated_at: new Date(), ...(input.name !== undefined ? { name: input.name } : {}) })
    .where('id', '=', id)
    .execute();
  return getSwarm(trx, id);
}

export async function deleteSwarm(trx: Trx, id: string): Promise<void> {
  const deleted = await trx.deleteFrom('swarms').where('id', '=', id).executeTakeFirst();
  if (deleted.numDeletedRows === 0n) throw FleetErrors.swarmNotFound();
}

/** A new run of the swarm: its row and one pending row per member, within the plan's runs a day. */
export async function recordSwarmRun(
  trx: Trx,
  userId: string,
  plan: string,
  swarmId: string,
  input: { message: string; mode: SwarmRunMode },
): Promise<string> {
  const swarm = await getSwarm(trx, swarmId);
  if (!swarm.agentIds.length) throw FleetErrors.swarmEmpty();
  await sql`select pg_advisory_xact_lock(hashtext('swarm-runs:' || ${userId}))`.execute(trx);
  const limit = swarmLimitsOf(plan).runsPerDay;
  const { n } = await trx
    .selectFrom('swarm_runs')
    .select(sql<string>`count(*)`.as('n'))
    .where('created_at', '>', sql<Date>`now() - interval '1 day'`)
    .executeTakeFirstOrThrow();
  if (Number(n) >= limit) throw FleetErrors.runLimit(limit);
  const run = await trx
    .insertInto('swarm_runs')
    .values({ swarm_id: swarmId, user_id: userId, mode: input.mode, message: input.message })
    .returning('id')
    .executeTakeFirstOrThrow();
  await trx
    .insertInto('swarm_run_members')
    .values(
      swarm.agentIds.map((agentId, position) => ({ run_id: run.id, agent_id: agentId, user_id: userId, position })),
    )
    .execute();
  return run.id;
}

/** Taking back a run whose job could not be queued: it would stay pending for ever. */
export async function deleteSwarmRun(trx: Trx, runId: string): Promise<void> {
  await trx.deleteFrom('swarm_runs').where('id', '=', runId).execute();
}

/**
 * The run as its owner sees it. A member's cost is the agent's model spend the AI gateway recorded
 * between its turn's start and end (usage rows are written in batches, so it may grow for a moment
 * after the turn; another turn of the same agent in that window counts too).
 */
export async function getSwarmRun(trx: Trx, swarmId: string, runId: string) {
  const run = await trx
    .selectFrom('swarm_runs')
    .select(['id', 'swarm_id', 'mode', 'message', 'status', 'created_at', 'finished_at'])
    .where('id', '=', runId)
    .where('swarm_id', '=', swarmId)
    .executeTakeFirst();
  if (!run) throw FleetErrors.swarmRunNotFound();
  const members = await trx
    .selectFrom('swarm_run_members as m')
    .select([
      'm.agent_id',
      'm.status',
      'm.answer',
      'm.error',
      'm.tokens',
      'm.started_at',
      'm.finished_at',
      sql<string | null>`case when m.started_at is null or m.finished_at is null then null else
        (select coalesce(sum(u.cost_usd), 0) from usage_events u where u.agent_id = m.agent_id::text and u.occurred_at between m.started_at and m.finished_at) end`.as(
        'cost',
      ),
    ])
    .where('m.run_id', '=', runId)
    .orderBy('m.position')
    .execute();
  return {
    id: run.id,
    swarmId: run.swarm_id,
    mode: run.mode,
    message: run.message,
    status: run.status,
    createdAt: run.created_at.toISOString(),
    finishedAt: run.finished_at?.toISOString() ?? null,
    members: members.map((m) => ({
      agentId: m.agent_id,
      status: m.status,
      answer: m.answer,
      error: m.error,
      tokens: m.tokens,
      costUsd: m.cost === null ? null : Number(m.cost),
      startedAt: m.started_at?.toISOString() ?? null,
      finishedAt: m.finished_at?.toISOString() ?? null,
    })),
  };
}
