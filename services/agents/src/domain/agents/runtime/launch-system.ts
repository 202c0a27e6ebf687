import { hashToken } from '@agentyard/crypto';
import { sql } from '@agentyard/db';
import type { SystemDb } from '@agentyard/db/system';
import { createLaunchSlots, createQuietPeriod, resourcesFor, RuntimeError, type ContainerInfo, type PortRange, type RuntimeDriver } from '@agentyard/runtime';
import { AgentErrors } from '../../../errors.ts';
import { buildAgentGatewayConfig } from '../openclaw-config.ts';
import { gatewayModelId } from '../plans.ts';
import type { AgentRow } from '../shapes.ts';
import { hostPortOf } from './host-ports-system.ts';
import type { AgentSecrets } from './secrets.ts';

export interface Deployed {
  created: boolean;
  containerId: string;
  hostPort: number;
}

export interface ContainerLaunchOptions {
  db: SystemDb;
  driver: RuntimeDriver;
  ports: PortRange;
  aiGatewayUrl: string;
  /** The console's origin, the one browser origin an agent's Control UI accepts. */
  consoleOrigin: string;
  /** Containers created and started at once (the rest wait their turn in arrival order). */
  launchConcurrency: number;
}

/** Creating, recording and removing an agent's containers. */
export function containerLauncher(options: ContainerLaunchOptions) {
  const { db, driver } = options;
  const launchSlot = createLaunchSlots(options.launchConcurrency);
  // Refills wait until launches have stopped for this long: a burst of claims first, then the engine refills.
  const launches = createQuietPeriod(250);

  /** The agent's OpenClaw config file and container resources. */
  function containerSpec(agent: AgentRow, image: string, secrets: AgentSecrets) {
    const config = JSON.stringify(
      buildAgentGatewayConfig({
        agentId: agent.id,
        modelId: gatewayModelId(agent.model),
        toolsProfile: agent.tools_profile,
        gatewayToken: secrets.gatewayToken,
        hooksToken: secrets.hooksToken,
        aiKey: secrets.aiKey,
        aiGatewayUrl: options.aiGatewayUrl,
        consoleOrigin: options.consoleOrigin,
        userConfig: agent.config,
      }),
      null,
      2,
    );
    return { agentId: agent.id, userId: agent.user_id, image, config, resources: resourcesFor(agent.plan) };
  }

  /** Creates and starts a container for `agent` with `image`; retries on a host port someone else bound. */
  function launch(agent: AgentRow, image: string, secrets: AgentSecrets): Promise<Deployed> {
    return launches.during(() => launchNow(agent, image, secrets));
  }

  async function launchNow(agent: AgentRow, image: string, secrets: AgentSecrets): Promise<Deployed> {
    const { config, resources } = containerSpec(agent, image, secrets);
    const avoid = new Set<number>();
    for (let attempt = 0; ; attempt++) {
      const hostPort = await hostPortOf(db, options.ports, agent, avoid);
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
    const version = await driver.version().then(
      (v) => `${v.engine} ${v.version}`,
      () => null,
    );
    const updated = await db
      .updateTable('agents')
      .set({
        container_id: deployed.containerId,
        host_port: deployed.hostPort,
        gateway_url: driver.gatewayUrl(deployed.hostPort, agentId),
        image,
        runtime_version: version,
        ai_key_hash: hashToken(secrets.aiKey),
        started_at: sql<Date>`now()`,
        updated_at: sql<Date>`now()`,
        ...secrets.sealed,
      })
      .where('id', '=', agentId)
      .executeTakeFirst();
    if (updated.numUpdatedRows === 0n) {
      await driver.remove(deployed.containerId).catch(() => undefined);
      throw AgentErrors.notFound();
    }
  }

  /** Every container of the agent, the recorded one and any left by an interrupted operation. */
  async function containersOf(agentId: string): Promise<ContainerInfo[]> {
    return driver.list({ agentId });
  }

  async function removeContainers(agentId: string, keep?: string): Promise<void> {
    for (const c of await containersOf(agentId)) if (c.id !== keep) await driver.remove(c.id);
  }

  return { launches, containerSpec, launch, record, containersOf, removeContainers };
}

export type ContainerLauncher = ReturnType<typeof containerLauncher>;
