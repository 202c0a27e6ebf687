import type { Keyring } from '@agentyard/crypto';
import { sql } from '@agentyard/db';
import type { SystemDb } from '@agentyard/db/system';
import { RuntimeError, type ContainerInfo, type RuntimeDriver } from '@agentyard/runtime';
import type { ExclusiveOperation } from '../agent-operations.ts';
import { AgentErrors, isAgentBusy } from '../../../errors.ts';
import { AGENT_FAILURES, type AgentFailure, type AgentRow } from '../shapes.ts';
import type { agentHealth } from './health.ts';
import type { ContainerLauncher, Deployed } from './launch-system.ts';
import { agentSecrets } from './secrets.ts';
import type { WarmContainers } from './warm-pool-system.ts';

export interface AgentLifecycleOptions {
  db: SystemDb;
  driver: RuntimeDriver;
  keyring: Keyring;
  /** Agents' public base URL (`<url>/<agentId>`), stored on the user once an agent runs. */
  publicUrl: string;
  /** One container operation per agent at a time, across processes. */
  exclusive: ExclusiveOperation;
  launcher: ContainerLauncher;
  warm: WarmContainers;
  readiness: Pick<ReturnType<typeof agentHealth>, 'waitUntilReady'>;
  log: { warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
}

/**
 * The operations on an agent's containers. Each leaves the row and the engine agreeing: a failure
 * removes what it created, so nothing is orphaned.
 */
export function agentLifecycle(options: AgentLifecycleOptions) {
  const { db, driver, keyring, exclusive, launcher, warm, readiness } = options;

  const load = (id: string) => db.selectFrom('agents').selectAll().where('id', '=', id).executeTakeFirst();
  const mustLoad = async (id: string) => {
    const row = await load(id);
    if (!row) throw AgentErrors.notFound();
    return row;
  };

  async function setStatus(agentId: string, status: AgentRow['status']) {
    await db.updateTable('agents').set({ status, last_error: null, last_error_detail: null, updated_at: sql<Date>`now()` }).where('id', '=', agentId).execute();
  }

  const runtimeCall = async <T>(operation: string, agentId: string, call: () => Promise<T>): Promise<T> => {
    try {
      return await call();
    } catch (error) {
      if (!(error instanceof RuntimeError)) throw error;
      options.log.error({ agentId, operation, err: { message: error.message } }, 'runtime operation failed');
      throw AgentErrors.runtimeFailed(operation);
    }
  };

  async function undeploy(agentId: string, failure: AgentFailure, detail: string | null = null): Promise<void> {
    options.log.warn({ agentId, failure, detail }, 'agent deployment failed');
    await launcher.removeContainers(agentId).catch((error) => options.log.warn({ agentId, err: { message: (error as Error).message } }, 'could not remove containers of a failed deployment'));
    await db
      .updateTable('agents')
      .set({
        status: 'error',
        last_error: failure,
        last_error_detail: detail,
        container_id: null,
        host_port: null,
        gateway_url: null,
        updated_at: sql<Date>`now()`,
      })
      .where('id', '=', agentId)
      .execute();
  }

  /** Makes sure the agent has a running container: starts the recorded one, or creates it. */
  async function ensureRunning(agent: AgentRow): Promise<Deployed> {
    return runtimeCall('deploy', agent.id, async () => {
      const existing = agent.container_id ? await driver.inspect(agent.container_id) : null;
      if (existing && agent.host_port !== null) {
        if (existing.state !== 'running') await driver.start(existing.id);
        return { created: false, containerId: existing.id, hostPort: agent.host_port };
      }
      return recreate(agent);
    });
  }

  /** Creates the agent's container from its stored configuration (removing any other of its containers), with its own image unless given another. */
  async function recreate(agent: AgentRow, image = agent.image ?? driver.defaultImage): Promise<Deployed> {
    const secrets = agentSecrets(keyring, agent);
    const claimed = await warm.claim(agent, image, secrets);
    if (claimed) return claimed;
    // What an interrupted attempt left behind goes before a new container takes its port.
    await launcher.removeContainers(agent.id);
    const deployed = await launcher.launch(agent, image, secrets);
    await launcher.record(agent.id, deployed, image, secrets);
    return deployed;
  }

  return {
    load,

    // Every operation below that changes an agent's containers runs under `exclusive` and reads
    // the agent's row once it has its turn, so it acts on what the previous operation left.

    /** Makes sure the agent has a running container: starts the recorded one, or creates it. */
    deploy: (agentId: string): Promise<Deployed> => exclusive(agentId, async () => ensureRunning(await mustLoad(agentId))),

    /** Undoes a failed deployment: no container, no port, status error with the failure (and its detail, kept from the web). */
    failDeployment: (agentId: string, failure: AgentFailure, detail?: string): Promise<void> => exclusive(agentId, () => undeploy(agentId, failure, detail)),

    setStatus,

    /** Spec §4.5: a running agent's URL and id become the user's runtime URL and instance id. */
    async recordUserRuntime(agentId: string): Promise<void> {
      const agent = await mustLoad(agentId);
      await db
        .updateTable('users')
        .set({ runtime_url: `${options.publicUrl.replace(/\/$/, '')}/${agent.id}`, runtime_instance_id: agent.id })
        .where('id', '=', agent.user_id)
        .execute();
    },

    start: (agentId: string): Promise<void> =>
      exclusive(agentId, async () => {
        await ensureRunning(await mustLoad(agentId));
        await setStatus(agentId, 'running');
      }),

    stop: (agentId: string): Promise<void> =>
      exclusive(agentId, async () => {
        const agent = await mustLoad(agentId);
        await runtimeCall('stop', agentId, async () => {
          if (agent.container_id) await driver.stop(agent.container_id);
        });
        await setStatus(agentId, 'stopped');
      }),

    restart: (agentId: string): Promise<void> =>
      exclusive(agentId, async () => {
        const agent = await mustLoad(agentId);
        await runtimeCall('restart', agentId, async () => {
          const existing = agent.container_id ? await driver.inspect(agent.container_id) : null;
          if (existing) await driver.restart(existing.id);
          else await recreate(agent);
        });
        await setStatus(agentId, 'running');
      }),

    repair: (agentId: string): Promise<void> =>
      exclusive(agentId, async () => {
        const agent = await mustLoad(agentId);
        await runtimeCall('repair', agentId, () => recreate(agent));
        await setStatus(agentId, 'running');
      }),

    /**
     * Rebuilds the agent's container from its stored configuration, keeping its memory, its status
     * and whether it runs. Without a container there is nothing to rebuild: the next start makes one.
     * The configuration is read once the rebuild has its turn, so the last one applies the latest save.
     */
    applyConfig: (agentId: string): Promise<string> =>
      exclusive(agentId, async () => {
        const agent = await load(agentId);
        if (!agent) return 'deleted';
        if (!agent.container_id) return 'no container';
        return runtimeCall('apply-config', agentId, async () => {
          const before = await driver.inspect(agent.container_id!);
          const rebuilt = await recreate(agent);
          if (before?.state === 'running') return 'applied';
          await driver.stop(rebuilt.containerId);
          return 'applied (stopped)';
        });
      }),

    /** Wipes the agent's memory and identity state (not its configuration) and starts it again. */
    resetMemory: (agentId: string): Promise<void> =>
      exclusive(agentId, async () => {
        const agent = await mustLoad(agentId);
        await runtimeCall('reset-memory', agentId, async () => {
          await launcher.removeContainers(agentId);
          await driver.removeState(agentId);
          await recreate(agent);
        });
        await setStatus(agentId, 'running');
      }),

    /**
     * Replaces the image: the old container is stopped (kept), the new one started on the same
     * port and given until /readyz answers; then the old one is removed. On any failure the new
     * one is removed, the old one started again, and the caller gets 500.
     */
    updateImage: (agentId: string, image: string): Promise<void> =>
      exclusive(agentId, async () => {
        const agent = await mustLoad(agentId);
        const previous = agent.container_id ? await runtimeCall('update', agentId, () => driver.inspect(agent.container_id!)) : null;
        if (!previous) {
          await runtimeCall('update', agentId, () => recreate(agent, image));
          await setStatus(agentId, 'running');
          return;
        }
        const wasRunning = previous.state === 'running';
        await runtimeCall('update', agentId, () => driver.stop(previous.id));
        let next: Deployed | null = null;
        try {
          const secrets = agentSecrets(keyring, agent);
          next = await launcher.launch(agent, image, secrets);
          if (!(await readiness.waitUntilReady(driver.gatewayUrl(next.hostPort, agentId)))) throw new RuntimeError('new image did not become ready');
          await launcher.record(agentId, next, image, secrets);
        } catch (error) {
          if (next) await driver.remove(next.containerId).catch(() => undefined);
          if (wasRunning) await driver.start(previous.id).catch((e) => options.log.error({ agentId, err: { message: (e as Error).message } }, 'could not restart the previous container'));
          options.log.warn({ agentId, image, err: { message: (error as Error).message } }, 'image update rolled back');
          if (error instanceof Error && 'statusCode' in error && (error as { statusCode: number }).statusCode === 404) throw error;
          throw AgentErrors.updateRolledBack();
        }
        await driver.remove(previous.id).catch(() => undefined);
        await setStatus(agentId, 'running');
      }),

    /** Removes the agent's containers, its state and its row (freeing its port); true when it existed. */
    remove: (agentId: string): Promise<boolean> =>
      exclusive(agentId, async () => {
        const recorded = (await load(agentId))?.container_id;
        await runtimeCall('delete', agentId, async () => {
          // The recorded one too: a warm container is recorded a moment before it is named for the agent.
          if (recorded) await driver.remove(recorded);
          await launcher.removeContainers(agentId);
          await driver.removeState(agentId);
        });
        const deleted = await db.deleteFrom('agents').where('id', '=', agentId).executeTakeFirst();
        return deleted.numDeletedRows > 0n;
      }),

    /**
     * Moves agents stuck in provisioning past `deadlineMs` to error (removing what they had) and
     * reports containers whose agent no longer exists.
     */
    async reconcile(deadlineMs: number): Promise<{ timedOut: string[]; orphans: ContainerInfo[] }> {
      const provisioning = ['provisioning', 'deploying'] as const;
      const stuck = await db
        .selectFrom('agents')
        .select('id')
        .where('status', 'in', provisioning)
        .where('created_at', '<', new Date(Date.now() - deadlineMs))
        .orderBy('created_at')
        .execute();
      const timedOut: string[] = [];
      for (const { id } of stuck) {
        try {
          // Looked at again once it has its turn: provisioning may have ended meanwhile.
          const failed = await exclusive(id, async () => {
            const agent = await load(id);
            if (!agent || !(provisioning as readonly string[]).includes(agent.status)) return false;
            await undeploy(id, AGENT_FAILURES.timedOut);
            return true;
          });
          if (failed) timedOut.push(id);
        } catch (error) {
          if (!isAgentBusy(error)) throw error; // an operation on it is under way: the next round looks again
        }
      }
      const containers = await driver.list();
      const ids = [...new Set(containers.map((c) => c.agentId))];
      const known = ids.length ? new Set((await db.selectFrom('agents').select('id').where('id', 'in', ids).execute()).map((r) => r.id)) : new Set<string>();
      const orphans = containers.filter((c) => !known.has(c.agentId));
      for (const orphan of orphans) options.log.warn({ containerId: orphan.id, agentId: orphan.agentId }, 'container without an agent');
      return { timedOut, orphans };
    },
  };
}
