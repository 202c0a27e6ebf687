import type { Logger } from 'pino';
import type { AppDb } from '@agentyard/db';
import type { SystemDb } from '@agentyard/db/system';
import { processLog } from './log.ts';
import type { ServerOptions } from './server.ts';

/** Services sit behind the edge on loopback: only its X-Forwarded-For is believed. */
export const EDGE_ON_LOOPBACK = '127.0.0.1/8,::1';

/** What domain code logs through (pino and Fastify's logger are one); modules take the methods they use. */
export interface Log {
  error(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

/** What every service's `buildApp` may be handed instead of making its own (tests share pools, read logs). */
export interface AppDeps {
  db?: AppDb;
  systemDb?: SystemDb;
  logStream?: ServerOptions['logStream'];
}

/** What every service's `startWorkers` may be handed instead of making its own. */
export interface WorkerDeps {
  log?: Logger;
  systemDb?: SystemDb;
}

/** Started queue workers: one graceful close (running jobs finish). */
export interface Workers {
  close(): Promise<void>;
}

/** The createServer options of a service behind the edge, from its configuration. */
export function serviceServerOptions(
  name: string,
  config: { LOG_LEVEL: string; BODY_LIMIT_BYTES: number },
): ServerOptions {
  return { name, logLevel: config.LOG_LEVEL, bodyLimit: config.BODY_LIMIT_BYTES, trustProxy: EDGE_ON_LOOPBACK };
}

/** The logger a worker process uses when none is handed in. */
export function workerLog(name: string, config: { LOG_LEVEL: string }, deps: WorkerDeps): Logger {
  return deps.log ?? processLog(name, config.LOG_LEVEL);
}
