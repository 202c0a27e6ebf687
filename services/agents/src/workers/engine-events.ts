import { parseKeyring } from '@agentyard/crypto';
import type { QueueSet } from '@agentyard/queue';
import type { AgentsConfig } from '../config.ts';
import type { RuntimeContext } from '../domain/runtime/privileged/runtime-context.ts';
import { agentWatchdog, type AgentWatchdog } from '../domain/telemetry/privileged/agent-watchdog.ts';

type Log = {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
};

/** After the engine's stream ends or fails, following again waits this long, doubling to the most. */
const FOLLOW_AGAIN_MS = { first: 500, most: 30_000 };

/**
 * Follows the container engine's events for the watchdog (no polling): each event becomes a job on
 * the lifecycle queue (one per event across workers). Each time the stream opens (on start, and
 * after the engine came back) the watchdog catches up on exits it could not see. Resolves once the
 * first stream opened or failed, so a worker that has started sees what happens from then on.
 */
export async function followEngineEvents(
  config: AgentsConfig,
  context: RuntimeContext,
  queues: QueueSet,
  log: Log,
): Promise<{ watchdog: AgentWatchdog; close(): Promise<void> }> {
  const watchdog = agentWatchdog({
    db: context.db,
    driver: context.driver,
    keyring: parseKeyring(config.ENCRYPTION_KEYS),
    exclusive: context.exclusive,
    queues,
    log,
  });
  const stop = new AbortController();
  const catchUp = () =>
    watchdog.catchUp().then(
      (found) => found && log.info({ found }, 'watchdog caught up on exits it had not seen'),
      (error: Error) => log.warn({ err: { message: error.message } }, 'watchdog catch-up failed'),
    );
  const events = context.driver.events?.bind(context.driver);
  if (!events) {
    // The process driver reports no events: the catch-up (here and with every reconcile) is all there is.
    await catchUp();
    return { watchdog, close: async () => undefined };
  }
  let firstOpen: () => void = () => undefined;
  const opened = new Promise<void>((resolve) => (firstOpen = resolve));
  const follow = async () => {
    let wait = FOLLOW_AGAIN_MS.first;
    while (!stop.signal.aborted) {
      try {
        for await (const event of events(stop.signal, () => {
          wait = FOLLOW_AGAIN_MS.first;
          firstOpen();
          void catchUp();
        })) {
          await watchdog
            .queue(event)
            .catch((error: Error) =>
              log.error(
                { err: { message: error.message }, containerId: event.containerId },
                'could not queue a container event',
              ),
            );
        }
      } catch (error) {
        log.warn({ err: { message: (error as Error).message } }, 'container engine events broke off; following again');
      }
      firstOpen();
      if (stop.signal.aborted) break;
      await new Promise((resolve) => setTimeout(resolve, wait).unref());
      wait = Math.min(wait * 2, FOLLOW_AGAIN_MS.most);
    }
  };
  const following = follow();
  await opened;
  return {
    watchdog,
    async close() {
      stop.abort();
      await following;
    },
  };
}
