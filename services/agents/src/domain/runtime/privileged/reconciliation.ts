import type { SystemDb } from '@agentyard/db/system';
import type { ContainerInfo, RuntimeDriver } from '@agentyard/runtime';
import { isAgentBusy } from '../../../errors.ts';
import { AGENT_FAILURES } from '../../agents/agent-views.ts';
import type { ExclusiveOperation } from '../agent-operations.ts';
import type { ContainerLauncher } from './launch.ts';
import { type LifecycleLog, loadAgent, runtimeCall, undeploy } from './lifecycle-status.ts';

/** What the reconciler works with (the lifecycle's options). */
export interface ReconcileOptions {
  db: SystemDb;
  driver: RuntimeDriver;
  launcher: ContainerLauncher;
  exclusive: ExclusiveOperation;
  log: LifecycleLog;
}

const PROVISIONING = ['provisioning', 'deploying'] as const;

/** Moves agents stuck in provisioning past `deadlineMs` to error (removing what they had), each in its turn. */
async function timeOutProvisioning(options: ReconcileOptions, deadlineMs: number): Promise<string[]> {
  const stuck = await options.db
    .selectFrom('agents')
    .select('id')
    .where('status', 'in', PROVISIONING)
    // Since its provisioning began: its creation, or a clone's (later) seeding.
    .where((eb) => eb(eb.fn.coalesce('provisioning_since', 'created_at'), '<', new Date(Date.now() - deadlineMs)))
    .orderBy('created_at')
    .execute();
  const timedOut: string[] = [];
  for (const { id } of stuck) {
    try {
      // Looked at again once it has its turn: provisioning may have ended meanwhile.
      const failed = await options.exclusive(id, async () => {
        const agent = await loadAgent(options.db, id);
        if (!agent || !(PROVISIONING as readonly string[]).includes(agent.status)) return false;
        await undeploy(options, id, AGENT_FAILURES.timedOut);
        return true;
      });
      if (failed) timedOut.push(id);
    } catch (error) {
      if (!isAgentBusy(error)) throw error; // an operation on it is under way: the next round looks again
    }
  }
  return timedOut;
}

/** Resumes the paused containers of agents that should run (a dead process's snapshot copy left them frozen). */
async function resumeFrozen(options: ReconcileOptions, containers: ContainerInfo[], known: Set<string>) {
  const { driver, log } = options;
  const resumed: string[] = [];
  for (const paused of containers.filter((c) => c.state === 'paused' && known.has(c.agentId))) {
    try {
      // Frozen by a snapshot's copy: a live copy holds the agent's turn, so in our turn its process has died.
      const thawed = await options.exclusive(paused.agentId, async () => {
        const agent = await loadAgent(options.db, paused.agentId);
        // Only an agent that should run: one hibernating is paused on purpose (its row says so).
        if (agent?.container_id !== paused.id || !['running', 'active'].includes(agent.status)) return false;
        if ((await driver.inspect(paused.id))?.state !== 'paused' || !driver.unpause) return false;
        await runtimeCall(log, 'resume', paused.agentId, () => driver.unpause!(paused.id));
        log.warn(
          { agentId: paused.agentId, containerId: paused.id },
          'resumed a container left frozen by a process that died',
        );
        return true;
      });
      if (thawed) resumed.push(paused.agentId);
    } catch (error) {
      if (!isAgentBusy(error)) throw error; // a copy is under way: the next round looks again
    }
  }
  return resumed;
}

/**
 * Moves agents stuck in provisioning past `deadlineMs` (counted from when their provisioning began:
 * their creation, or a clone's seeding) to error (removing what they had), resumes containers a
 * dead process left frozen, and reports containers whose agent no longer exists.
 */
export async function reconcile(
  options: ReconcileOptions,
  deadlineMs: number,
): Promise<{ timedOut: string[]; resumed: string[]; orphans: ContainerInfo[] }> {
  const { db, driver, log } = options;
  const timedOut = await timeOutProvisioning(options, deadlineMs);
  const containers = await driver.list();
  const ids = [...new Set(containers.map((c) => c.agentId))];
  const known = ids.length
    ? new Set((await db.selectFrom('agents').select('id').where('id', 'in', ids).execute()).map((r) => r.id))
    : new Set<string>();
  const orphans = containers.filter((c) => !known.has(c.agentId));
  for (const orphan of orphans)
    log.warn({ containerId: orphan.id, agentId: orphan.agentId }, 'container without an agent');
  const resumed = await resumeFrozen(options, containers, known);
  return { timedOut, resumed, orphans };
}
