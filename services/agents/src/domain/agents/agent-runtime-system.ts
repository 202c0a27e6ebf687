import { setTimeout as delay } from 'node:timers/promises';
import { openAgentSecret, probeAgent, sealAgentSecret } from '@agentyard/agent-gateway';
import { hashToken, randomToken, type Keyring } from '@agentyard/crypto';
import { isUniqueViolation, lockForTransaction, sql } from '@agentyard/db';
import type { SystemDb } from '@agentyard/db/system';
import { claimHostPort, createLaunchSlots, createQuietPeriod, resourcesFor, RuntimeError, type ContainerInfo, type PortRange, type RuntimeDriver, type WarmClass } from '@agentyard/runtime';
import type { ExclusiveOperation } from './agent-operations.ts';
import { AgentErrors, isAgentBusy } from '../../errors.ts';
import { buildAgentGatewayConfig } from './openclaw-config.ts';
import { gatewayModelId } from './plans.ts';
import { AGENT_FAILURES, type AgentFailure, type AgentRow } from './shapes.ts';

export type ContainerHealth = 'healthy' | 'starting' | 'running' | 'stopped' | 'suspended' | 'not_found' | 'error';

export interface AgentRuntimeOptions {
  db: SystemDb;
  driver: RuntimeDriver;
  keyring: Keyring;
  ports: PortRange;
  aiGatewayUrl: string;
  /** Agents' public base URL (`<url>/<agentId>`), stored on the user once an agent runs. */
  publicUrl: string;
  readyTimeoutMs: number;
  probeTimeoutMs: number;
  /** Containers created and started at once (the rest wait their turn in arrival order). */
  launchConcurrency: number;
  /** Warm containers to keep per class (default image): empty for none. */
  warm: WarmClass[];
  /** One container operation per agent at a time, across processes. */
  exclusive: ExclusiveOperation;
  log: { warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
}

export interface Deployed {
  created: boolean;
  containerId: string;
  hostPort: number;
}

/**
 * The agent's own secrets: made once, kept sealed in its row (new ones are stored with the first
 * container that uses them); the AI key is new for each container.
 */
interface AgentSecrets {
  gatewayToken: string;
  hooksToken: string;
  aiKey: string;
  /** Sealed forms of tokens made just now, for the row. */
  sealed?: { gateway_token_sealed: string; hooks_token_sealed: string };
}

/**
 * Agents on the runtime, for workers and API-key routes (system connection). Each operation leaves
 * the row and the engine agreeing: a failure removes what it created, so nothing is orphaned.
 */
export function createAgentRuntime(options: AgentRuntimeOptions) {
  const { db, driver, keyring, exclusive } = options;
  const launchSlot = createLaunchSlots(options.launchConcurrency);

  const load = (id: string) => db.selectFrom('agents').selectAll().where('id', '=', id).executeTakeFirst();
  const mustLoad = async (id: string) => {
    const row = await load(id);
    if (!row) throw AgentErrors.notFound();
    return row;
  };

  function secretsOf(agent: AgentRow): AgentSecrets {
    const aiKey = `ag_${randomToken()}`;
    if (agent.gateway_token_sealed && agent.hooks_token_sealed) {
      return {
        gatewayToken: openAgentSecret(keyring, agent.id, 'gateway-token', agent.gateway_token_sealed),
        hooksToken: openAgentSecret(keyring, agent.id, 'hooks-token', agent.hooks_token_sealed),
        aiKey,
      };
    }
    const gatewayToken = randomToken();
    const hooksToken = randomToken();
    const sealed = { gateway_token_sealed: sealAgentSecret(keyring, agent.id, 'gateway-token', gatewayToken), hooks_token_sealed: sealAgentSecret(keyring, agent.id, 'hooks-token', hooksToken) };
    return { gatewayToken, hooksToken, aiKey, sealed };
  }

  /** The agent's port: the one it holds, or a new one claimed under the unique constraint. */
  async function portOf(agent: AgentRow, avoid: Set<number> = new Set()): Promise<number> {
    if (agent.host_port !== null && !avoid.has(agent.host_port)) return agent.host_port;
    const taken = new Set((await db.selectFrom('agents').select('host_port').where('host_port', 'is not', null).execute()).map((r) => r.host_port!));
    for (const p of avoid) taken.add(p);
    return claimHostPort(options.ports, taken, async (port) => {
      try {
        const claimed = await db.updateTable('agents').set({ host_port: port }).where('id', '=', agent.id).executeTakeFirst();
        if (claimed.numUpdatedRows === 0n) throw AgentErrors.notFound();
        return true;
      } catch (error) {
        if (isUniqueViolation(error)) return false;
        throw error;
      }
    });
  }

  const warmPool = options.warm.some((w) => w.count > 0) ? driver.warm : undefined;
  // Refills wait until launches have stopped for this long: a burst of claims first, then the engine refills.
  const launches = createQuietPeriod(250);
  let topping: Promise<void> | undefined;
  let toppingAgain = false;
  let settled = false;
  /**
   * Brings the warm containers back to their numbers, in the background. One process at a time
   * (a transaction advisory lock on the default image), so scaled-out workers do not overshoot.
   */
  function topUpWarm(): Promise<void> {
    if (!warmPool || settled) return Promise.resolve();
    if (topping) { toppingAgain = true; return topping; }
    topping = (async () => {
      await launches.whenQuiet(); // without holding a connection the launches need
      do {
        toppingAgain = false;
        await db.transaction().execute(async (trx) => {
          await lockForTransaction(trx, `agentyard:warm-pool:${driver.defaultImage}`);
          await warmPool.topUp(options.warm, launches.whenQuiet);
        });
      } while (toppingAgain && !settled);
    })().catch((error) => options.log.warn({ err: { message: (error as Error).message } }, 'could not top up the warm containers'))
      .finally(() => { topping = undefined; });
    return topping;
  }

  /** The agent's OpenClaw config file and container resources. */
  function containerSpec(agent: AgentRow, image: string, secrets: AgentSecrets) {
    const config = JSON.stringify(buildAgentGatewayConfig({
      agentId: agent.id, modelId: gatewayModelId(agent.model), toolsProfile: agent.tools_profile,
      gatewayToken: secrets.gatewayToken, hooksToken: secrets.hooksToken, aiKey: secrets.aiKey,
      aiGatewayUrl: options.aiGatewayUrl, userConfig: agent.config,
    }), null, 2);
    return { agentId: agent.id, userId: agent.user_id, image, config, resources: resourcesFor(agent.plan) };
  }

  /**
   * A warm container for an agent that never had a port (its gateway starts at once), recorded with
   * the port the engine published it on (under the unique constraint), then named for the agent and
   * anything an interrupted attempt left removed (after the handover: the engine's list is slow
   * under load). null when none waits or another agent holds that port (its container stopped).
   */
  function claimWarm(agent: AgentRow, image: string, secrets: AgentSecrets): Promise<Deployed | null> {
    if (!warmPool || agent.host_port !== null) return Promise.resolve(null);
    return launches.during(async () => {
      const claimed = await warmPool.claim(containerSpec(agent, image, secrets));
      if (!claimed) return null;
      void topUpWarm();
      const deployed = { created: true, containerId: claimed.containerId, hostPort: claimed.hostPort };
      try {
        await record(agent.id, deployed, image, secrets);
        await claimed.named();
      } catch (error) {
        await driver.remove(claimed.containerId).catch(() => undefined);
        await driver.removeState(agent.id).catch(() => undefined);
        // Another agent holds the port (its container stopped), or the container had stopped: a new one, then.
        if (isUniqueViolation(error) || error instanceof RuntimeError) return null;
        throw error;
      }
      await removeContainers(agent.id, claimed.containerId);
      return deployed;
    });
  }

  /** Creates and starts a container for `agent` with `image`; retries on a host port someone else bound. */
  function launch(agent: AgentRow, image: string, secrets: AgentSecrets): Promise<Deployed> {
    return launches.during(() => launchNow(agent, image, secrets));
  }

  async function launchNow(agent: AgentRow, image: string, secrets: AgentSecrets): Promise<Deployed> {
    const { config, resources } = containerSpec(agent, image, secrets);
    const avoid = new Set<number>();
    for (let attempt = 0; ; attempt++) {
      const hostPort = await portOf(agent, avoid);
      const spec = { agentId: agent.id, userId: agent.user_id, image, hostPort, config, resources };
      try {
        return await launchSlot(async () => {
          const containerId = await driver.create(spec);
          try {
            await driver.start(containerId);
          } catch (error) {
            await driver.remove(containerId).catch(() => undefined);
            throw error;
          }
          return { created: true, containerId, hostPort };
        });
      } catch (error) {
        if (error instanceof RuntimeError && error.portInUse && attempt < 5) {
          avoid.add(hostPort);
          agent = { ...agent, host_port: null };
          continue;
        }
        throw error;
      }
    }
  }

  /** Records a started container on the row; if the agent was deleted meanwhile, removes the container. */
  async function record(agentId: string, deployed: Deployed, image: string, secrets: AgentSecrets): Promise<void> {
    const version = await driver.version().then((v) => `${v.engine} ${v.version}`, () => null);
    const updated = await db.updateTable('agents').set({
      container_id: deployed.containerId, host_port: deployed.hostPort, gateway_url: driver.gatewayUrl(deployed.hostPort),
      image, runtime_version: version, ai_key_hash: hashToken(secrets.aiKey), started_at: sql<Date>`now()`, updated_at: sql<Date>`now()`,
      ...secrets.sealed,
    }).where('id', '=', agentId).executeTakeFirst();
    if (updated.numUpdatedRows === 0n) {
      await driver.remove(deployed.containerId).catch(() => undefined);
      throw AgentErrors.notFound();
    }
  }

  async function setStatus(agentId: string, status: AgentRow['status']) {
    await db.updateTable('agents').set({ status, last_error: null, last_error_detail: null, updated_at: sql<Date>`now()` }).where('id', '=', agentId).execute();
  }

  /** Every container of the agent, the recorded one and any left by an interrupted operation. */
  async function containersOf(agentId: string): Promise<ContainerInfo[]> {
    return driver.list({ agentId });
  }

  async function removeContainers(agentId: string, keep?: string): Promise<void> {
    for (const c of await containersOf(agentId)) if (c.id !== keep) await driver.remove(c.id);
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

  async function waitUntilReady(gatewayUrl: string, timeoutMs = options.readyTimeoutMs): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const probe = await probeAgent(gatewayUrl, Math.min(options.probeTimeoutMs, Math.max(100, deadline - Date.now())));
      if (probe.ready === true) return true;
      await delay(250);
    }
    return false;
  }

  async function health(agent: AgentRow): Promise<ContainerHealth> {
    if (agent.status === 'suspended') return 'suspended';
    if (!agent.container_id) return 'not_found';
    const info = await driver.inspect(agent.container_id).catch(() => undefined);
    if (info === undefined) return 'error';
    if (info === null) return 'not_found';
    if (info.state === 'dead') return 'error';
    if (info.state !== 'running' && info.state !== 'restarting') return 'stopped';
    const probe = await probeAgent(agent.gateway_url ?? driver.gatewayUrl(info.hostPort ?? agent.host_port ?? 0), options.probeTimeoutMs);
    return probe.live ? 'healthy' : 'starting';
  }

  async function undeploy(agentId: string, failure: AgentFailure, detail: string | null = null): Promise<void> {
    options.log.warn({ agentId, failure, detail }, 'agent deployment failed');
    await removeContainers(agentId).catch((error) => options.log.warn({ agentId, err: { message: (error as Error).message } }, 'could not remove containers of a failed deployment'));
    await db.updateTable('agents').set({
      status: 'error', last_error: failure, last_error_detail: detail, container_id: null, host_port: null, gateway_url: null, updated_at: sql<Date>`now()`,
    }).where('id', '=', agentId).execute();
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
    const secrets = secretsOf(agent);
    const warm = await claimWarm(agent, image, secrets);
    if (warm) return warm;
    // What an interrupted attempt left behind goes before a new container takes its port.
    await removeContainers(agent.id);
    const deployed = await launch(agent, image, secrets);
    await record(agent.id, deployed, image, secrets);
    return deployed;
  }

  return {
    load,
    health,
    waitUntilReady,
    containersOf,
    topUpWarm,
    /** No more warm containers from this process: waits for a top-up under way (before closing the connections). */
    async settle() {
      settled = true;
      await topping;
    },

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
      await db.updateTable('users').set({ runtime_url: `${options.publicUrl.replace(/\/$/, '')}/${agent.id}`, runtime_instance_id: agent.id })
        .where('id', '=', agent.user_id).execute();
    },

    start: (agentId: string): Promise<void> => exclusive(agentId, async () => {
      await ensureRunning(await mustLoad(agentId));
      await setStatus(agentId, 'running');
    }),

    stop: (agentId: string): Promise<void> => exclusive(agentId, async () => {
      const agent = await mustLoad(agentId);
      await runtimeCall('stop', agentId, async () => { if (agent.container_id) await driver.stop(agent.container_id); });
      await setStatus(agentId, 'stopped');
    }),

    restart: (agentId: string): Promise<void> => exclusive(agentId, async () => {
      const agent = await mustLoad(agentId);
      await runtimeCall('restart', agentId, async () => {
        const existing = agent.container_id ? await driver.inspect(agent.container_id) : null;
        if (existing) await driver.restart(existing.id);
        else await recreate(agent);
      });
      await setStatus(agentId, 'running');
    }),

    repair: (agentId: string): Promise<void> => exclusive(agentId, async () => {
      const agent = await mustLoad(agentId);
      await runtimeCall('repair', agentId, () => recreate(agent));
      await setStatus(agentId, 'running');
    }),

    /**
     * Rebuilds the agent's container from its stored configuration, keeping its memory, its status
     * and whether it runs. Without a container there is nothing to rebuild: the next start makes one.
     * The configuration is read once the rebuild has its turn, so the last one applies the latest save.
     */
    applyConfig: (agentId: string): Promise<string> => exclusive(agentId, async () => {
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
    resetMemory: (agentId: string): Promise<void> => exclusive(agentId, async () => {
      const agent = await mustLoad(agentId);
      await runtimeCall('reset-memory', agentId, async () => {
        await removeContainers(agentId);
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
    updateImage: (agentId: string, image: string): Promise<void> => exclusive(agentId, async () => {
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
        const secrets = secretsOf(agent);
        next = await launch(agent, image, secrets);
        if (!(await waitUntilReady(driver.gatewayUrl(next.hostPort)))) throw new RuntimeError('new image did not become ready');
        await record(agentId, next, image, secrets);
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
    remove: (agentId: string): Promise<boolean> => exclusive(agentId, async () => {
      const recorded = (await load(agentId))?.container_id;
      await runtimeCall('delete', agentId, async () => {
        // The recorded one too: a warm container is recorded a moment before it is named for the agent.
        if (recorded) await driver.remove(recorded);
        await removeContainers(agentId);
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
      const stuck = await db.selectFrom('agents').select('id').where('status', 'in', provisioning)
        .where('created_at', '<', new Date(Date.now() - deadlineMs)).orderBy('created_at').execute();
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

export type AgentRuntime = ReturnType<typeof createAgentRuntime>;
