import closeWithGrace from 'close-with-grace';
import type { FastifyInstance } from 'fastify';
import pino, { type Logger } from 'pino';
import { plainSetting, refuseExposedListeners } from '@agentyard/config';
import { opsAddress, startOpsListener, type OpsListener } from '@agentyard/observability';
import { logDestination, loggerOptions } from './log.ts';

interface Listener {
  app: FastifyInstance;
  address: { host: string; port: number };
  /** What EDGE_EXPOSED_LISTENERS calls it (the edge's web, backend, agent); else the app's name. */
  name?: string;
}

type Env = Record<string, string | undefined>;

/**
 * Outside production (NODE_ENV unset is development: admins before verification, the local checkout,
 * the process driver) every listener of every process, its operations listener included, serves
 * loopback only; EDGE_EXPOSED_LISTENERS may name one anyway (npm start names the edge's agent listener).
 * Throws ConfigError before anything listens.
 */
export function refuseDevelopmentExposure(listeners: { name: string; host: string }[], env: Env = process.env): void {
  refuseExposedListeners(
    plainSetting('NODE_ENV', env) ?? 'development',
    listeners,
    plainSetting('EDGE_EXPOSED_LISTENERS', env) ?? '',
  );
}

/**
 * How long readiness answers 503 before the process stops taking requests, so a load balancer (or
 * Kubernetes) that polls `/readyz` stops sending first: `<PROCESS>_READINESS_DRAIN_MS`
 * (`AUTH_READINESS_DRAIN_MS`), else `READINESS_DRAIN_MS`, else 5 s in production and none elsewhere.
 */
export function drainDelayMs(processName: string, env: Record<string, string | undefined> = process.env): number {
  const set =
    env[`${processName.toUpperCase().replace(/[^A-Z0-9]/g, '_')}_READINESS_DRAIN_MS`] ?? env.READINESS_DRAIN_MS;
  if (set) return Number(set);
  return env.NODE_ENV === 'production' ? 5000 : 0;
}

/** The process a Fastify app names (`edge-web`, `edge-backend` and `edge-agents` are one `edge`). */
const processOf = (serviceName: string) => serviceName.replace(/^edge-.*$/, 'edge');

/**
 * On SIGTERM/SIGINT: readiness turns 503, the drain delay passes (requests are still served), then
 * `close` runs and the operations listener closes last. A crash closes without the delay.
 */
function closeGracefully(
  processName: string,
  log: Logger | FastifyInstance['log'],
  ops: OpsListener,
  close: () => Promise<void>,
): void {
  const drain = drainDelayMs(processName);
  closeWithGrace({ delay: drain + 10_000 }, async ({ err, signal }) => {
    ops.drain();
    if (err) log.error({ err }, 'closing after a fatal error');
    else {
      log.info({ signal, drainMs: drain }, 'draining: readiness is 503');
      if (drain > 0) await new Promise((resolve) => setTimeout(resolve, drain));
      log.info('closing');
    }
    try {
      await close();
    } finally {
      await ops.close();
    }
  });
}

/**
 * Listens (and opens this process's operations listener: `/livez`, `/readyz`, `/metrics`), then
 * on SIGTERM/SIGINT or a crash drains and closes every app (their onClose hooks release pools,
 * queues and workers) and finally runs `release` for what the apps share.
 */
export async function runServices(listeners: Listener[], release?: () => Promise<void>): Promise<void> {
  const first = listeners[0]!.app;
  const name = processOf(first.serviceName);
  const opsAt = opsAddress(name);
  refuseDevelopmentExposure([
    ...listeners.map(({ app, address, name }) => ({ name: name ?? app.serviceName, host: address.host })),
    { name: 'operations', host: opsAt.host },
  ]);
  const ops = await startOpsListener(opsAt);
  closeGracefully(name, first.log, ops, async () => {
    await Promise.all(listeners.map(({ app }) => app.close()));
    await release?.();
  });
  for (const { app, address } of listeners) await app.listen(address);
  reportListening(
    listeners.map(({ app }) => app),
    ops.port,
  );
}

/**
 * A parent that started this process with an IPC channel (the test platform) learns the ports
 * actually bound, so it can start services on port 0 instead of guessing free ports (a worker
 * process, which binds none but its operations listener, reports that its workers have started).
 */
function reportListening(apps: FastifyInstance[], opsPort: number): void {
  if (!process.send) return;
  const ports = apps.map((app) => {
    const address = app.server.address();
    return typeof address === 'object' && address ? address.port : null;
  });
  process.send({ type: 'listening', ports, opsPort });
  process.channel?.unref();
}

export function runService(
  app: FastifyInstance,
  address: { host: string; port: number },
  release?: () => Promise<void>,
): Promise<void> {
  return runServices([{ app, address }], release);
}

/**
 * A queue-worker process: a logger with the services' redaction, its operations listener, the
 * workers `start` returns, and on SIGTERM/SIGINT or a crash one graceful close (running jobs
 * finish) before exiting.
 */
export async function runWorkerProcess(
  name: string,
  logLevel: string,
  start: (log: Logger) => Promise<{ close(): Promise<void> }> | { close(): Promise<void> },
): Promise<void> {
  const opsAt = opsAddress(name);
  refuseDevelopmentExposure([{ name: 'operations', host: opsAt.host }]);
  const destination = logDestination();
  const log = destination ? pino(loggerOptions(name, logLevel), destination) : pino(loggerOptions(name, logLevel));
  const ops = await startOpsListener(opsAt);
  const workers = await start(log);
  log.info({ opsPort: ops.port }, `${name} started`);
  reportListening([], ops.port);
  closeGracefully(name, log, ops, () => workers.close());
}
