import type { Keyring } from '@agentyard/crypto';
import type { SystemDb } from '@agentyard/db/system';
import type { RuntimeDriver } from '@agentyard/runtime';
import type { AgentRow } from '../../agents/agent-views.ts';
import { agentSecrets } from '../secrets.ts';
import type { ContainerLauncher, Deployed } from './launch.ts';
import { followGatewayAddress } from './gateway-address.ts';
import { admitted, type LifecycleLog, runtimeCall, setStatus } from './lifecycle-status.ts';
import type { WarmContainers } from './warm-pool.ts';

/** What bringing an agent up works with (the lifecycle's options). */
export interface BringUpOptions {
  db: SystemDb;
  driver: RuntimeDriver;
  keyring: Keyring;
  launcher: ContainerLauncher;
  warm: WarmContainers;
  /** The plan the agent comes up on now; throws why it may not (its owner's plan, the platform's capacity). */
  admit: (agent: AgentRow) => Promise<string>;
  log: LifecycleLog;
}

/** Creates the agent's container from its stored configuration (removing any other of its containers), with its own image unless given another. */
export async function recreate(
  { db, driver, keyring, warm, launcher }: BringUpOptions,
  agent: AgentRow,
  image = agent.image ?? driver.defaultImage,
): Promise<Deployed> {
  const secrets = await agentSecrets(db, keyring, agent);
  const claimed = await warm.claim(agent, image, secrets);
  if (claimed) return claimed;
  // What an interrupted attempt left behind goes before a new container takes its port.
  await launcher.removeContainers(agent.id);
  const deployed = await launcher.launch(agent, image, secrets);
  await launcher.record(agent.id, deployed, image, secrets);
  return deployed;
}

/** Makes sure the agent has a running container: starts the recorded one, or creates it. */
async function ensureRunning(options: BringUpOptions, agent: AgentRow & { resized?: boolean }): Promise<Deployed> {
  const { db, driver } = options;
  return runtimeCall(options.log, 'deploy', agent.id, async () => {
    const existing = agent.container_id ? await driver.inspect(agent.container_id) : null;
    if (existing && agent.host_port !== null && !agent.resized) {
      if (existing.state !== 'running') {
        await driver.start(existing.id);
        await followGatewayAddress(db, driver, agent.id);
      }
      return { created: false, containerId: existing.id, hostPort: agent.host_port };
    }
    return recreate(options, agent);
  });
}

/** Brings the agent up on its owner's current plan, in the caller's turn: its recorded container started, or one made at the plan's size. */
export const bringUp = async (options: BringUpOptions, agentId: string): Promise<Deployed> =>
  ensureRunning(options, await admitted(options, agentId));

/** Rebuilds the agent's container from its stored configuration and runs it, in the caller's turn. */
export async function rebuild(options: BringUpOptions, agentId: string): Promise<void> {
  const agent = await admitted(options, agentId);
  await runtimeCall(options.log, 'repair', agentId, () => recreate(options, agent));
  await setStatus(options.db, agentId, 'running');
}

/** Restarts the agent's container in place, or makes it again (none recorded, or its plan's size changed), in the caller's turn. */
export async function restartAgent(options: BringUpOptions, agentId: string): Promise<void> {
  const { db, driver } = options;
  const agent = await admitted(options, agentId);
  await runtimeCall(options.log, 'restart', agentId, async () => {
    const existing = agent.container_id && !agent.resized ? await driver.inspect(agent.container_id) : null;
    if (existing) {
      await driver.restart(existing.id);
      await followGatewayAddress(db, driver, agentId);
    } else await recreate(options, agent);
  });
  await setStatus(db, agentId, 'running');
}

/** Wipes the agent's memory and identity state (not its configuration) and starts it again, in the caller's turn. */
export async function resetMemory(options: BringUpOptions, agentId: string): Promise<void> {
  const agent = await admitted(options, agentId);
  await runtimeCall(options.log, 'reset-memory', agentId, async () => {
    await options.launcher.removeContainers(agentId);
    await options.driver.removeState(agentId);
    await recreate(options, agent);
  });
  await setStatus(options.db, agentId, 'running');
}
