import closeWithGrace from 'close-with-grace';
import type { FastifyInstance } from 'fastify';
import pino, { type Logger } from 'pino';
import { loggerOptions } from './log.ts';

interface Listener {
  app: FastifyInstance;
  address: { host: string; port: number };
}

/**
 * Listens, then on SIGTERM/SIGINT or a crash closes every app (their onClose hooks release pools,
 * queues and workers) and finally runs `release` for what the apps share.
 */
export async function runServices(listeners: Listener[], release?: () => Promise<void>): Promise<void> {
  const log = listeners[0]!.app.log;
  closeWithGrace({ delay: 10_000 }, async ({ err, signal }) => {
    if (err) log.error({ err }, 'closing after a fatal error');
    else log.info({ signal }, 'closing');
    await Promise.all(listeners.map(({ app }) => app.close()));
    await release?.();
  });
  for (const { app, address } of listeners) await app.listen(address);
  reportListening(listeners.map(({ app }) => app));
}

/**
 * A parent that started this process with an IPC channel (the test platform) learns the ports
 * actually bound, so it can start services on port 0 instead of guessing free ports (a worker
 * process, which binds none, reports that its workers have started).
 */
function reportListening(apps: FastifyInstance[]): void {
  if (!process.send) return;
  const ports = apps.map((app) => {
    const address = app.server.address();
    return typeof address === 'object' && address ? address.port : null;
  });
  process.send({ type: 'listening', ports });
  process.channel?.unref();
}

export function runService(app: FastifyInstance, address: { host: string; port: number }, release?: () => Promise<void>): Promise<void> {
  return runServices([{ app, address }], release);
}

/**
 * A queue-worker process: a logger with the services' redaction, the workers `start` returns, and
 * on SIGTERM/SIGINT or a crash one graceful close (running jobs finish) before exiting.
 */
export async function runWorkerProcess(name: string, logLevel: string, start: (log: Logger) => Promise<{ close(): Promise<void> }> | { close(): Promise<void> }): Promise<void> {
  const log = pino(loggerOptions(name, logLevel));
  const workers = await start(log);
  log.info(`${name} started`);
  reportListening([]);
  closeWithGrace({ delay: 10_000 }, async ({ err, signal }) => {
    if (err) log.error({ err }, 'closing after a fatal error');
    else log.info({ signal }, 'closing');
    await workers.close();
  });
}
