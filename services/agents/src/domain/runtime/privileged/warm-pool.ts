import { isUniqueViolation, lockForTransaction } from '@agentyard/db';
import type { SystemDb } from '@agentyard/db/system';
import { RuntimeError, type RuntimeDriver, type WarmClass } from '@agentyard/runtime';
import type { AgentRow } from '../../agents/agent-views.ts';
import type { ContainerLauncher, Deployed } from './launch.ts';
import type { AgentSecrets } from '../secrets.ts';
import type { agentHealth } from '../health.ts';
import { primeWarmGateway } from '../warm-priming.ts';

export interface WarmContainerOptions {
  db: SystemDb;
  driver: RuntimeDriver;
  /** Warm containers to keep per class (default image): empty for none. */
  warm: WarmClass[];
  /** Their gateways boot before their claim (with throwaway secrets of their own) and take their agent's config by hot reload. */
  warmBooted: boolean;
  launcher: ContainerLauncher;
  readiness: Pick<ReturnType<typeof agentHealth>, 'waitUntilReady'>;
  log: { warn(obj: object, msg: string): void };
}

/** The warm containers an agent without a port can take at once, and their refills. */
export function warmContainers(options: WarmContainerOptions) {
  const { db, driver, launcher } = options;
  const { launches } = launcher;
  const warmPool = options.warm.some((w) => w.count > 0) ? driver.warm : undefined;
  let topping: Promise<void> | undefined;
  let toppingAgain = false;
  let settled = false;
  /** A booted warm container's config, and its first turn once its gateway is up (what the claiming agent's first turn then skips). */
  const boot = options.warmBooted
    ? () => {
        const { config, gatewayToken } = launcher.warmBootConfig();
        // A gateway that never became ready (exited during its boot) is replaced by the next top-up, run now.
        const started = (hostPort: number) =>
          void primeWarmGateway(options.readiness, driver.gatewayUrl(hostPort, ''), gatewayToken).then((ready) => {
            if (!ready) void topUp();
          });
        return { config, started };
      }
    : undefined;

  /**
   * Brings the warm containers back to their numbers, in the background. One process at a time
   * (a transaction advisory lock on the default image), so scaled-out workers do not overshoot.
   */
  function topUp(): Promise<void> {
    if (!warmPool || settled) return Promise.resolve();
    if (topping) {
      toppingAgain = true;
      return topping;
    }
    topping = (async () => {
      await launches.whenQuiet(); // without holding a connection the launches need
      do {
        toppingAgain = false;
        await db.transaction().execute(async (trx) => {
          await lockForTransaction(trx, `agentyard:warm-pool:${driver.defaultImage}`);
          await warmPool.topUp(options.warm, launches.whenQuiet, boot);
        });
      } while (toppingAgain && !settled);
    })()
      .catch((error) =>
        options.log.warn({ err: { message: (error as Error).message } }, 'could not top up the warm containers'),
      )
      .finally(() => {
        topping = undefined;
      });
    return topping;
  }

  /**
   * A warm container for an agent that never had a port (its gateway starts at once), recorded with
   * the port the engine published it on (under the unique constraint), then named for the agent and
   * anything an interrupted attempt left removed (after the handover: the engine's list is slow
   * under load). null when none waits or another agent holds that port (its container stopped).
   */
  function claim(agent: AgentRow, image: string, secrets: AgentSecrets): Promise<Deployed | null> {
    if (!warmPool || agent.host_port !== null) return Promise.resolve(null);
    return launches.during(async () => {
      const claimed = await warmPool.claim(launcher.containerSpec(agent, image, secrets));
      if (!claimed) return null;
      void topUp();
      const deployed = {
        created: true,
        containerId: claimed.containerId,
        hostPort: claimed.hostPort,
        hotReloads: claimed.booted,
      };
      try {
        await launcher.record(agent.id, deployed, image, secrets);
        await claimed.named();
      } catch (error) {
        await driver.remove(claimed.containerId).catch(() => undefined);
        await driver.removeState(agent.id).catch(() => undefined);
        // Another agent holds the port (its container stopped), or the container had stopped: a new one, then.
        if (isUniqueViolation(error) || error instanceof RuntimeError) return null;
        throw error;
      }
      await launcher.removeContainers(agent.id, claimed.containerId);
      return deployed;
    });
  }

  /** No more warm containers from this process: waits for a top-up under way (before closing the connections). */
  async function settle(): Promise<void> {
    settled = true;
    await topping;
  }

  return { topUp, claim, settle };
}

export type WarmContainers = ReturnType<typeof warmContainers>;
