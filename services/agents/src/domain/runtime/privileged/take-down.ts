import { sql } from '@agentyard/db';
import type { SystemDb } from '@agentyard/db/system';
import type { RuntimeDriver } from '@agentyard/runtime';
import { HOLDING_STATUSES } from '../../agents/privileged/plan-allowance.ts';
import { AGENT_FAILURES } from '../../agents/agent-views.ts';
import type { ContainerLauncher } from './launch.ts';
import { type LifecycleLog, loadAgent, mustLoad, runtimeCall, setStatus } from './lifecycle-status.ts';

/** What stopping and removing an agent works with (the lifecycle's options). */
export interface TakeDownOptions {
  db: SystemDb;
  driver: RuntimeDriver;
  launcher: ContainerLauncher;
  log: LifecycleLog;
}

/** Stops the agent's container, in the caller's turn; its status says it was stopped. */
export async function stopAgent({ db, driver, log }: TakeDownOptions, agentId: string): Promise<void> {
  const agent = await mustLoad(db, agentId);
  await runtimeCall(log, 'stop', agentId, async () => {
    if (agent.container_id) await driver.stop(agent.container_id);
  });
  await setStatus(db, agentId, 'stopped');
}

/**
 * Stops an agent its owner's plan no longer covers, in the caller's turn, with the reason the
 * owner sees (`last_error`). Idempotent: an agent already stopped, or deleted, is left as it is.
 */
export async function stopBeyondPlan({ db, driver, log }: TakeDownOptions, agentId: string): Promise<boolean> {
  const agent = await loadAgent(db, agentId);
  if (!agent || !HOLDING_STATUSES.includes(agent.status)) return false;
  await runtimeCall(log, 'stop', agentId, async () => {
    if (agent.container_id) await driver.stop(agent.container_id);
  });
  await db
    .updateTable('agents')
    .set({
      status: 'stopped',
      hibernation: null,
      suspended_at: null,
      stops_beyond_plan_at: null,
      last_error: AGENT_FAILURES.planEnded,
      last_error_detail: null,
      updated_at: sql<Date>`now()`,
    })
    .where('id', '=', agentId)
    .execute();
  return true;
}

/** Removes the agent's containers, its state and its row (freeing its port), in the caller's turn; true when it existed. */
export async function removeAgent({ db, driver, launcher, log }: TakeDownOptions, agentId: string): Promise<boolean> {
  const recorded = (await loadAgent(db, agentId))?.container_id;
  await runtimeCall(log, 'delete', agentId, async () => {
    // The recorded one too: a warm container is recorded a moment before it is named for the agent.
    if (recorded) await driver.remove(recorded);
    await launcher.removeContainers(agentId);
    await driver.removeState(agentId);
  });
  const deleted = await db.deleteFrom('agents').where('id', '=', agentId).executeTakeFirst();
  return deleted.numDeletedRows > 0n;
}
