import { sql } from '@agentyard/db';
import type { SystemDb } from '@agentyard/db/system';
import { resourcesFor } from '@agentyard/runtime';
import type { AgentRow } from '../../agents/agent-views.ts';
import { afterFor } from '../hibernation-policy.ts';
import { type AgentHibernationOptions, lastActive, UP } from './hibernation-context.ts';
import { loadAgent } from './lifecycle-status.ts';

const idleSince = async (activity: AgentHibernationOptions['activity'], agent: AgentRow): Promise<number> =>
  (await lastActive(activity, [agent])).get(agent.id)!;

const suspend = (db: SystemDb, agentId: string, fromStatus: AgentRow['status'], hibernation: 'paused' | 'stopped') =>
  db
    .updateTable('agents')
    .set({
      status: 'suspended',
      hibernation,
      suspended_at: sql<Date>`coalesce(suspended_at, now())`,
      updated_at: sql<Date>`now()`,
    })
    .where('id', '=', agentId)
    .where('status', '=', fromStatus)
    .executeTakeFirst();

/** Pauses the idle agent's container (memory kept, no CPU), in its turn, once its plan's pause time has passed. */
export async function pause(options: AgentHibernationOptions, agentId: string): Promise<string> {
  const { db, driver, activity, log } = options;
  return options.exclusive(agentId, async () => {
    const agent = await loadAgent(db, agentId);
    if (!agent?.container_id || !UP.includes(agent.status)) return 'not running';
    // Looked at again in its turn: a request may have come meanwhile.
    const after = afterFor(options.pauseAfter, agent.plan);
    if (after === null || Date.now() - (await idleSince(activity, agent)) < after) return 'active again';
    // Never in the middle of a turn, nor under an open socket.
    if ((await activity.held([agentId])).size) return 'held';
    const info = await driver.inspect(agent.container_id);
    if (info?.state !== 'running' || !driver.pause) return 'not running';
    // The row first: whoever reads it from now on wakes the agent, and waits for this turn to end.
    if ((await suspend(db, agentId, agent.status, 'paused')).numUpdatedRows === 0n) return 'changed';
    try {
      await driver.pause(agent.container_id);
    } catch (error) {
      await db
        .updateTable('agents')
        .set({ status: agent.status, hibernation: null, suspended_at: null })
        .where('id', '=', agentId)
        .execute();
      throw error;
    }
    log.info?.({ agentId }, 'idle agent paused');
    return 'paused';
  });
}

/** Stops the idle (or paused) agent's container (state disk kept), in its turn, once its plan's stop time has passed. */
export async function stop(options: AgentHibernationOptions, agentId: string): Promise<string> {
  const { db, driver, activity, log } = options;
  return options.exclusive(agentId, async () => {
    const agent = await loadAgent(db, agentId);
    if (!agent?.container_id) return 'no container';
    if (!(agent.status === 'suspended' && agent.hibernation === 'paused') && !UP.includes(agent.status))
      return 'not hibernating';
    const after = afterFor(options.stopAfter, agent.plan);
    if (after === null || Date.now() - (await idleSince(activity, agent)) < after) return 'active again';
    if ((await activity.held([agentId])).size) return 'held';
    // Suspended before the container exits: the watchdog reads this exit as expected.
    if ((await suspend(db, agentId, agent.status, 'stopped')).numUpdatedRows === 0n) return 'changed';
    await driver.stop(agent.container_id);
    log.info?.({ agentId }, 'idle agent stopped');
    return 'stopped';
  });
}

/** Restarts an idle agent whose gateway holds too much memory, and tells its owner in its events. */
export async function recycle(
  { db, restart, log }: Pick<AgentHibernationOptions, 'db' | 'restart' | 'log'>,
  agent: AgentRow,
  memoryBytes: number,
): Promise<string> {
  await restart(agent.id);
  const mib = (bytes: number) => `${Math.round(bytes / 1024 ** 2)} MiB`;
  await db
    .insertInto('agent_events')
    .values({
      agent_id: agent.id,
      user_id: agent.user_id,
      kind: 'recycled',
      expected: true,
      detail: `idle with ${mib(memoryBytes)} of its ${mib(resourcesFor(agent.plan).memoryBytes)}: restarted to give memory back`,
    })
    .execute();
  log.info?.({ agentId: agent.id, memoryBytes }, 'idle agent recycled');
  return 'recycled';
}
