import { hashToken, randomToken } from '@agentyard/crypto';
import { sql } from '@agentyard/db';
import type { SystemDb } from '@agentyard/db/system';
import {
  createLaunchSlots,
  createQuietPeriod,
  resourcesFor,
  RuntimeError,
  type ContainerInfo,
  type PortRange,
  type RuntimeDriver,
} from '@agentyard/runtime';
import { AgentErrors } from '../../../errors.ts';
import { buildAgentGatewayConfig, channelSecretFiles } from '../../gateway/gateway-config.ts';
import { channelEgressHosts } from '../../gateway/channel-vault.ts';
import { gatewayModelId } from '../../agents/plans.ts';
import type { AgentRow } from '../../agents/agent-views.ts';
import { hostPortOf } from './host-ports.ts';
import type { AgentSecrets } from '../secrets.ts';

export interface Deployed {
  created: boolean;
  containerId: string;
  hostPort: number;
  /** A booted warm gateway claimed: the agent's config reaches it by hot reload, after /readyz already answers ready. */
  hotReloads?: boolean;
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
  /** Development and tests only: the Telegram Bot API root agents' Telegram channels call. */
  telegramApiRoot?: string;
}

/** The model provider a booted warm gateway's own config names (an agent's is `agentyard`). */
const WARM_PROVIDER = 'warmup';

/** The agent's OpenClaw config file and container resources. */
function containerSpec(options: ContainerLaunchOptions, agent: AgentRow, image: string, secrets: AgentSecrets) {
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
      channels: secrets.channels,
      telegramApiRoot: options.telegramApiRoot,
    }),
    null,
    2,
  );
  const egressHosts = channelEgressHosts(secrets.channels, options.telegramApiRoot);
  return {
    agentId: agent.id,
    userId: agent.user_id,
    image,
    config,
    secretFiles: channelSecretFiles(secrets.channels),
    resources: resourcesFor(agent.plan),
    egressHosts,
  };
}

/**
 * The own config of a warm container whose gateway boots before any agent claims it: an agent's
 * config with secrets made for this container alone and kept nowhere (the AI gateway knows no
 * such key), so the claim replaces every one of them by the gateway's hot reload.
 */
function warmBootConfig(options: ContainerLaunchOptions) {
  const secrets = { gatewayToken: randomToken(), hooksToken: randomToken(), aiKey: `ag_${randomToken()}` };
  const config = buildAgentGatewayConfig({
    agentId: 'warm',
    modelId: gatewayModelId(''),
    toolsProfile: 'messaging',
    ...secrets,
    aiGatewayUrl: options.aiGatewayUrl,
    consoleOrigin: options.consoleOrigin,
    userConfig: {},
  });
  // Its model provider under another name: the priming turn's refused call puts the provider it
  // used in OpenClaw's auth cooldown, which must not be the agent's `agentyard` after the reload.
  const models = config.models as { providers: Record<string, unknown> };
  const defaults = (config.agents as { defaults: { model: string } }).defaults;
  models.providers = { [WARM_PROVIDER]: models.providers.agentyard };
  defaults.model = defaults.model.replace(/^agentyard\//, `${WARM_PROVIDER}/`);
  return { config: JSON.stringify(config, null, 2), gatewayToken: secrets.gatewayToken };
}

/** Creates and starts a container for `agent` with `image` in a launch slot; retries on a host port someone else bound. */
async function launchNow(
  options: ContainerLaunchOptions,
  launchSlot: ReturnType<typeof createLaunchSlots>,
  agent: AgentRow,
  image: string,
  secrets: AgentSecrets,
): Promise<Deployed> {
  const { db, driver } = options;
  const { config, secretFiles, resources, egressHosts } = containerSpec(options, agent, image, secrets);
  const avoid = new Set<number>();
  for (let attempt = 0; ; attempt++) {
    const hostPort = await hostPortOf(db, options.ports, agent, avoid);
    const spec = {
      agentId: agent.id,
      userId: agent.user_id,
      image,
      hostPort,
      config,
      secretFiles,
      resources,
      egressHosts,
    };
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
async function record(
  { db, driver }: Pick<ContainerLaunchOptions, 'db' | 'driver'>,
  agentId: string,
  deployed: Deployed,
  image: string,
  secrets: AgentSecrets,
): Promise<void> {
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

/** Creating, recording and removing an agent's containers. */
export function containerLauncher(options: ContainerLaunchOptions) {
  const { driver } = options;
  const launchSlot = createLaunchSlots(options.launchConcurrency);
  // Refills wait until launches have stopped for this long: a burst of claims first, then the engine refills.
  const launches = createQuietPeriod(250);

  /** Every container of the agent, the recorded one and any left by an interrupted operation. */
  const containersOf = async (agentId: string): Promise<ContainerInfo[]> => driver.list({ agentId });

  return {
    launches,
    containerSpec: (agent: AgentRow, image: string, secrets: AgentSecrets) =>
      containerSpec(options, agent, image, secrets),
    warmBootConfig: () => warmBootConfig(options),
    /** Creates and starts a container for `agent` with `image`; retries on a host port someone else bound. */
    launch: (agent: AgentRow, image: string, secrets: AgentSecrets): Promise<Deployed> =>
      launches.during(() => launchNow(options, launchSlot, agent, image, secrets)),
    record: (agentId: string, deployed: Deployed, image: string, secrets: AgentSecrets): Promise<void> =>
      record(options, agentId, deployed, image, secrets),
    containersOf,
    async removeContainers(agentId: string, keep?: string): Promise<void> {
      for (const c of await containersOf(agentId)) if (c.id !== keep) await driver.remove(c.id);
    },
  };
}

export type ContainerLauncher = ReturnType<typeof containerLauncher>;
