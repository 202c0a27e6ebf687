import type { Keyring } from '@agentyard/crypto';
import { sql } from '@agentyard/db';
import type { SystemDb } from '@agentyard/db/system';
import { RuntimeError, type ContainerInfo, type RuntimeDriver } from '@agentyard/runtime';
import type { ExclusiveOperation } from '../agent-operations.ts';
import { AgentErrors, isAgentBusy } from '../../../errors.ts';
import { HOLDING_STATUSES } from '../../agents/privileged/plan-allowance.ts';
import { toolsProfileOf } from '../../agents/plans.ts';
import { AGENT_FAILURES, type AgentFailure, type AgentRow } from '../../agents/agent-views.ts';
import type { agentHealth } from '../health.ts';
import type { ContainerLauncher, Deployed } from './launch.ts';
import { agentSecrets } from '../secrets.ts';
import { watchesItsConfig, type ReloadKind } from '../../gateway/config-reload.ts';
import type { WarmContainers } from './warm-pool.ts';
import { followGatewayAddress } from './gateway-address.ts';

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
  /** The plan the agent comes up on now; throws why it may not (its owner's plan, the platform's capacity). */
  admit: (agent: AgentRow) => Promise<string>;
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
  /**
   * The agent, once its owner's plan and the platform allow it to come up, on that plan: after an
   * upgrade or a downgrade its plan and tools profile are the current plan's, and `resized` says
   * its container must be made again at the plan's size (its state disk stays); `previous` is the
   * plan its current container was made for.
   */
  const admitted = async (
    id: string,
  ): Promise<AgentRow & { resized: boolean; previous: Pick<AgentRow, 'plan' | 'tools_profile'> }> => {
    const row = await mustLoad(id);
    const plan = await options.admit(row);
    const previous = { plan: row.plan, tools_profile: row.tools_profile };
    if (plan === row.plan) return { ...row, resized: false, previous };
    const followed = await db
      .updateTable('agents')
      .set({ plan, tools_profile: toolsProfileOf(plan), updated_at: sql<Date>`now()` })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
    return { ...followed, resized: true, previous };
  };

  async function setStatus(agentId: string, status: AgentRow['status']) {
    // An operation that sets the status ends any hibernation (a start or restart resumes a paused container).
    await db
      .updateTable('agents')
      .set({
        status,
        hibernation: null,
        suspended_at: null,
        last_error: null,
        last_error_detail: null,
        updated_at: sql<Date>`now()`,
      })
      .where('id', '=', agentId)
      .execute();
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
    await launcher
      .removeContainers(agentId)
      .catch((error) =>
        options.log.warn(
          { agentId, err: { message: (error as Error).message } },
          'could not remove containers of a failed deployment',
        ),
      );
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
  async function ensureRunning(agent: AgentRow & { resized?: boolean }): Promise<Deployed> {
    return runtimeCall('deploy', agent.id, async () => {
      const existing = agent.container_id ? await driver.inspect(agent.container_id) : null;
      if (existing && agent.host_port !== null && !agent.resized) {
        if (existing.state !== 'running') {
          await driver.start(existing.id);
          await followGatewayAddress(db, driver, agent.id);
        }
        return { created: false, containerId: existing.id, hostPort: agent.host_port };
      }
      return recreate(agent);
    });
  }

  /** Brings the agent up on its owner's current plan, in the caller's turn: its recorded container started, or one made at the plan's size. */
  const bringUp = async (agentId: string): Promise<Deployed> => ensureRunning(await admitted(agentId));

  /** Rebuilds the agent's container from its stored configuration and runs it, in the caller's turn. */
  const rebuild = async (agentId: string): Promise<void> => {
    const agent = await admitted(agentId);
    await runtimeCall('repair', agentId, () => recreate(agent));
    await setStatus(agentId, 'running');
  };

  /** Creates the agent's container from its stored configuration (removing any other of its containers), with its own image unless given another. */
  async function recreate(agent: AgentRow, image = agent.image ?? driver.defaultImage): Promise<Deployed> {
    const secrets = await agentSecrets(db, keyring, agent);
    const claimed = await warm.claim(agent, image, secrets);
    if (claimed) return claimed;
    // What an interrupted attempt left behind goes before a new container takes its port.
    await launcher.removeContainers(agent.id);
    const deployed = await launcher.launch(agent, image, secrets);
    await launcher.record(agent.id, deployed, image, secrets);
    return deployed;
  }

  /** The AI key in the config file a container's gateway runs with; null when it cannot be read back. */
  async function runningAiKey(containerId: string): Promise<string | null> {
    const text = await driver.readConfig?.(containerId);
    if (!text) return null;
    try {
      const key = (JSON.parse(text) as { models?: { providers?: { agentyard?: { apiKey?: unknown } } } }).models
        ?.providers?.agentyard?.apiKey;
      return typeof key === 'string' && key.startsWith('ag_') ? key : null;
    } catch {
      return null;
    }
  }

  /**
   * An image update where the agent has one container whose spec a create replaces (kubernetes): the
   * new spec, started and given until /readyz answers; on any failure the previous spec (its image,
   * the plan it was made for) is created again and started if it ran, and the caller gets 500.
   */
  async function updateInPlace(
    agent: Awaited<ReturnType<typeof admitted>>,
    image: string,
    wasRunning: boolean,
  ): Promise<void> {
    const secrets = await agentSecrets(db, keyring, agent);
    try {
      const next = await runtimeCall('update', agent.id, () => launcher.launch(agent, image, secrets));
      if (!(await readiness.waitUntilReady(driver.gatewayUrl(next.hostPort, agent.id))))
        throw new RuntimeError('new image did not become ready');
      await launcher.record(agent.id, next, image, secrets);
    } catch (error) {
      const before = { ...agent, ...agent.previous };
      const previousImage = agent.image ?? driver.defaultImage;
      try {
        const back = await launcher.launch(before, previousImage, secrets);
        await launcher.record(agent.id, back, previousImage, secrets);
        if (!wasRunning) await driver.stop(back.containerId);
      } catch (e) {
        options.log.error(
          { agentId: agent.id, err: { message: (e as Error).message } },
          'could not bring the previous image back',
        );
      }
      if (agent.resized) await db.updateTable('agents').set(agent.previous).where('id', '=', agent.id).execute();
      options.log.warn(
        { agentId: agent.id, image, err: { message: (error as Error).message } },
        'image update rolled back',
      );
      if (error instanceof Error && 'statusCode' in error && (error as { statusCode: number }).statusCode === 404)
        throw error;
      throw AgentErrors.updateRolledBack();
    }
    await setStatus(agent.id, 'running');
  }

  return {
    load,

    // Every operation below that changes an agent's containers runs under `exclusive` and reads
    // the agent's row once it has its turn, so it acts on what the previous operation left.

    /** Makes sure the agent has a running container: starts the recorded one, or creates it. */
    deploy: (agentId: string): Promise<Deployed> => exclusive(agentId, () => bringUp(agentId)),

    /** A start without taking the agent's turn, for a caller that holds it (a wake from a stop): the same admission and plan as `start`. */
    bringUp,

    /** Undoes a failed deployment: no container, no port, status error with the failure (and its detail, kept from the web). */
    failDeployment: (agentId: string, failure: AgentFailure, detail?: string): Promise<void> =>
      exclusive(agentId, () => undeploy(agentId, failure, detail)),

    setStatus,

    /** A running agent's URL and id become the user's runtime URL and instance id. */
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
        await bringUp(agentId);
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

    /**
     * Stops an agent its owner's plan no longer covers, with the reason the owner sees
     * (`last_error`). Idempotent: an agent already stopped, or deleted, is left as it is.
     */
    stopBeyondPlan: (agentId: string): Promise<boolean> =>
      exclusive(agentId, async () => {
        const agent = await load(agentId);
        if (!agent || !HOLDING_STATUSES.includes(agent.status)) return false;
        await runtimeCall('stop', agentId, async () => {
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
      }),

    restart: (agentId: string): Promise<void> =>
      exclusive(agentId, async () => {
        const agent = await admitted(agentId);
        await runtimeCall('restart', agentId, async () => {
          const existing = agent.container_id && !agent.resized ? await driver.inspect(agent.container_id) : null;
          if (existing) {
            await driver.restart(existing.id);
            await followGatewayAddress(db, driver, agentId);
          } else await recreate(agent);
        });
        await setStatus(agentId, 'running');
      }),

    repair: (agentId: string): Promise<void> => exclusive(agentId, () => rebuild(agentId)),

    /** A repair without taking the agent's turn, for a caller that holds it (a restore brings the agent up on its new state). */
    rebuild,

    /**
     * Gives the agent its stored configuration, keeping its memory, its status and whether it runs.
     * `hot-reload`: a running gateway that watches its config gets the new file in place (same
     * container, same process, same AI key). Otherwise the container is rebuilt from it (`restart`), the agent
     * `deploying` meanwhile, so its owner sees the restart as status events. Without a container
     * there is nothing to apply: the next start makes one from it. The configuration is read once
     * the operation has its turn, so the last one applies the latest save.
     */
    applyConfig: (agentId: string, reload: ReloadKind = 'restart'): Promise<string> =>
      exclusive(agentId, async () => {
        const agent = await load(agentId);
        if (!agent) return 'deleted';
        if (!agent.container_id) return 'no container';
        return runtimeCall('apply-config', agentId, async () => {
          const before = await driver.inspect(agent.container_id!);
          const image = agent.image ?? driver.defaultImage;
          // The AI key is the running gateway's (only its hash is stored): it stays, or the gateway's calls would be refused.
          const aiKey =
            reload === 'hot-reload' && before?.state === 'running' && watchesItsConfig(image)
              ? await runningAiKey(before.id)
              : null;
          if (aiKey && driver.replaceConfig) {
            await driver.replaceConfig(
              before!.id,
              launcher.containerSpec(agent, image, { ...(await agentSecrets(db, keyring, agent)), aiKey }).config,
            );
            return 'hot-reloaded';
          }
          if (before?.state !== 'running') {
            const rebuilt = await recreate(agent);
            await driver.stop(rebuilt.containerId);
            // A hibernating agent's new container waits stopped: its next wake starts it.
            if (agent.status === 'suspended')
              await db.updateTable('agents').set({ hibernation: 'stopped' }).where('id', '=', agentId).execute();
            return 'applied (stopped)';
          }
          await setStatus(agentId, 'deploying');
          try {
            await recreate(agent);
          } finally {
            await setStatus(agentId, agent.status);
          }
          return 'applied';
        });
      }),

    /** Wipes the agent's memory and identity state (not its configuration) and starts it again. */
    resetMemory: (agentId: string): Promise<void> =>
      exclusive(agentId, async () => {
        const agent = await admitted(agentId);
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
        const agent = await admitted(agentId);
        const previous = agent.container_id
          ? await runtimeCall('update', agentId, () => driver.inspect(agent.container_id!))
          : null;
        if (!previous) {
          await runtimeCall('update', agentId, () => recreate(agent, image));
          await setStatus(agentId, 'running');
          return;
        }
        const wasRunning = previous.state === 'running';
        if (driver.updatesInPlace) return updateInPlace(agent, image, wasRunning);
        await runtimeCall('update', agentId, () => driver.stop(previous.id));
        let next: Deployed | null = null;
        try {
          const secrets = await agentSecrets(db, keyring, agent);
          next = await launcher.launch(agent, image, secrets);
          if (!(await readiness.waitUntilReady(driver.gatewayUrl(next.hostPort, agentId))))
            throw new RuntimeError('new image did not become ready');
          await launcher.record(agentId, next, image, secrets);
        } catch (error) {
          if (next) await driver.remove(next.containerId).catch(() => undefined);
          if (wasRunning)
            await driver
              .start(previous.id)
              .catch((e) =>
                options.log.error(
                  { agentId, err: { message: (e as Error).message } },
                  'could not restart the previous container',
                ),
              );
          // The previous container is the one that runs: the row names the plan it was made for again.
          if (agent.resized) await db.updateTable('agents').set(agent.previous).where('id', '=', agentId).execute();
          options.log.warn({ agentId, image, err: { message: (error as Error).message } }, 'image update rolled back');
          if (error instanceof Error && 'statusCode' in error && (error as { statusCode: number }).statusCode === 404)
            throw error;
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
     * Moves agents stuck in provisioning past `deadlineMs` (counted from when their provisioning began:
     * their creation, or a clone's seeding) to error (removing what they had), resumes containers a
     * dead process left frozen, and reports containers whose agent no longer exists.
     */
    async reconcile(deadlineMs: number): Promise<{ timedOut: string[]; resumed: string[]; orphans: ContainerInfo[] }> {
      const provisioning = ['provisioning', 'deploying'] as const;
      const stuck = await db
        .selectFrom('agents')
        .select('id')
        .where('status', 'in', provisioning)
        // Since its provisioning began: its creation, or a clone's (later) seeding.
        .where((eb) => eb(eb.fn.coalesce('provisioning_since', 'created_at'), '<', new Date(Date.now() - deadlineMs)))
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
      const known = ids.length
        ? new Set((await db.selectFrom('agents').select('id').where('id', 'in', ids).execute()).map((r) => r.id))
        : new Set<string>();
      const orphans = containers.filter((c) => !known.has(c.agentId));
      for (const orphan of orphans)
        options.log.warn({ containerId: orphan.id, agentId: orphan.agentId }, 'container without an agent');
      const resumed: string[] = [];
      for (const paused of containers.filter((c) => c.state === 'paused' && known.has(c.agentId))) {
        try {
          // Frozen by a snapshot's copy: a live copy holds the agent's turn, so in our turn its process has died.
          const thawed = await exclusive(paused.agentId, async () => {
            const agent = await load(paused.agentId);
            // Only an agent that should run: one hibernating is paused on purpose (its row says so).
            if (agent?.container_id !== paused.id || !['running', 'active'].includes(agent.status)) return false;
            if ((await driver.inspect(paused.id))?.state !== 'paused' || !driver.unpause) return false;
            await runtimeCall('resume', paused.agentId, () => driver.unpause!(paused.id));
            options.log.warn(
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
      return { timedOut, resumed, orphans };
    },
  };
}
