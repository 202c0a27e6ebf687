import type { SystemDb } from '@agentyard/db/system';
import { RuntimeError } from '@agentyard/runtime';
import { AgentErrors } from '../../../errors.ts';
import { watchesItsConfig, type ReloadKind } from '../../gateway/config-reload.ts';
import type { agentHealth } from '../health.ts';
import { agentSecrets } from '../secrets.ts';
import { type BringUpOptions, recreate } from './bring-up.ts';
import type { Deployed } from './launch.ts';
import { type AdmittedAgent, admitted, loadAgent, runtimeCall, setStatus } from './lifecycle-status.ts';

/** What an image update works with: what a bring-up does, and the new gateway's readiness. */
export interface ImageUpdateOptions extends BringUpOptions {
  readiness: Pick<ReturnType<typeof agentHealth>, 'waitUntilReady'>;
}

/**
 * The end of a failed image update, once the previous container is back: it is the one that runs, so
 * the row names the plan it was made for again; the caller gets 500 (or the 404 of an agent deleted meanwhile).
 */
async function rolledBack(
  { db, log }: { db: SystemDb; log: BringUpOptions['log'] },
  agent: AdmittedAgent,
  image: string,
  error: unknown,
): Promise<never> {
  if (agent.resized) await db.updateTable('agents').set(agent.previous).where('id', '=', agent.id).execute();
  log.warn({ agentId: agent.id, image, err: { message: (error as Error).message } }, 'image update rolled back');
  if (error instanceof Error && 'statusCode' in error && (error as { statusCode: number }).statusCode === 404)
    throw error;
  throw AgentErrors.updateRolledBack();
}

/**
 * An image update where the agent has one container whose spec a create replaces (kubernetes): the
 * new spec, started and given until /readyz answers; on any failure the previous spec (its image,
 * the plan it was made for) is created again and, if it ran, started and given until /readyz
 * answers, and the caller gets 500.
 */
async function updateInPlace(
  options: ImageUpdateOptions,
  agent: AdmittedAgent,
  image: string,
  wasRunning: boolean,
): Promise<void> {
  const { db, driver, launcher, log } = options;
  const secrets = await agentSecrets(db, options.keyring, agent);
  try {
    const next = await runtimeCall(log, 'update', agent.id, () => launcher.launch(agent, image, secrets));
    if (!(await options.readiness.waitUntilReady(driver.gatewayUrl(next.hostPort, agent.id))))
      throw new RuntimeError('new image did not become ready');
    await launcher.record(agent.id, next, image, secrets);
  } catch (error) {
    const before = { ...agent, ...agent.previous };
    const previousImage = agent.image ?? driver.defaultImage;
    try {
      const back = await launcher.launch(before, previousImage, secrets);
      await launcher.record(agent.id, back, previousImage, secrets);
      if (!wasRunning) await driver.stop(back.containerId);
      // Its one pod boots again: "restored" is said once it answers, not while its owner's chats would fail.
      else if (!(await options.readiness.waitUntilReady(driver.gatewayUrl(back.hostPort, agent.id))))
        log.error({ agentId: agent.id, image: previousImage }, 'the previous image did not answer again');
    } catch (e) {
      log.error(
        { agentId: agent.id, err: { message: (e as Error).message } },
        'could not bring the previous image back',
      );
    }
    return rolledBack(options, agent, image, error);
  }
  await setStatus(db, agent.id, 'running');
}

/**
 * Replaces the image, in the caller's turn: the old container is stopped (kept), the new one
 * started on the same port and given until /readyz answers; then the old one is removed. On any
 * failure the new one is removed, the old one started again, and the caller gets 500.
 */
export async function updateImage(options: ImageUpdateOptions, agentId: string, image: string): Promise<void> {
  const { db, driver, launcher, log } = options;
  const agent = await admitted(options, agentId);
  const previous = agent.container_id
    ? await runtimeCall(log, 'update', agentId, () => driver.inspect(agent.container_id!))
    : null;
  if (!previous) {
    await runtimeCall(log, 'update', agentId, () => recreate(options, agent, image));
    await setStatus(db, agentId, 'running');
    return;
  }
  const wasRunning = previous.state === 'running';
  if (driver.updatesInPlace) return updateInPlace(options, agent, image, wasRunning);
  await runtimeCall(log, 'update', agentId, () => driver.stop(previous.id));
  let next: Deployed | null = null;
  try {
    const secrets = await agentSecrets(db, options.keyring, agent);
    next = await launcher.launch(agent, image, secrets);
    if (!(await options.readiness.waitUntilReady(driver.gatewayUrl(next.hostPort, agentId))))
      throw new RuntimeError('new image did not become ready');
    await launcher.record(agentId, next, image, secrets);
  } catch (error) {
    if (next) await driver.remove(next.containerId).catch(() => undefined);
    if (wasRunning)
      await driver
        .start(previous.id)
        .catch((e) =>
          log.error({ agentId, err: { message: (e as Error).message } }, 'could not restart the previous container'),
        );
    return rolledBack(options, agent, image, error);
  }
  await driver.remove(previous.id).catch(() => undefined);
  await setStatus(db, agentId, 'running');
}

/** The AI key in the config file a container's gateway runs with; null when it cannot be read back. */
async function runningAiKey(driver: BringUpOptions['driver'], containerId: string): Promise<string | null> {
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
 * Gives the agent its stored configuration, in the caller's turn, keeping its memory, its status and
 * whether it runs. `hot-reload`: a running gateway that watches its config gets the new file in place
 * (same container, same process, same AI key). Otherwise the container is rebuilt from it (`restart`),
 * the agent `deploying` meanwhile, so its owner sees the restart as status events. Without a container
 * there is nothing to apply: the next start makes one from it. The configuration is read once
 * the operation has its turn, so the last one applies the latest save.
 */
export async function applyConfig(options: BringUpOptions, agentId: string, reload: ReloadKind): Promise<string> {
  const { db, driver } = options;
  const agent = await loadAgent(db, agentId);
  if (!agent) return 'deleted';
  if (!agent.container_id) return 'no container';
  return runtimeCall(options.log, 'apply-config', agentId, async () => {
    const before = await driver.inspect(agent.container_id!);
    const image = agent.image ?? driver.defaultImage;
    // The AI key is the running gateway's (only its hash is stored): it stays, or the gateway's calls would be refused.
    const aiKey =
      reload === 'hot-reload' && before?.state === 'running' && watchesItsConfig(image)
        ? await runningAiKey(driver, before.id)
        : null;
    if (aiKey && driver.replaceConfig) {
      await driver.replaceConfig(
        before!.id,
        options.launcher.containerSpec(agent, image, { ...(await agentSecrets(db, options.keyring, agent)), aiKey })
          .config,
      );
      return 'hot-reloaded';
    }
    if (before?.state !== 'running') {
      const rebuilt = await recreate(options, agent);
      await driver.stop(rebuilt.containerId);
      // A hibernating agent's new container waits stopped: its next wake starts it.
      if (agent.status === 'suspended')
        await db.updateTable('agents').set({ hibernation: 'stopped' }).where('id', '=', agentId).execute();
      return 'applied (stopped)';
    }
    await setStatus(db, agentId, 'deploying');
    try {
      await recreate(options, agent);
    } finally {
      await setStatus(db, agentId, agent.status);
    }
    return 'applied';
  });
}
