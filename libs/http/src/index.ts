export { createServer, type ServiceApp, type ServerOptions } from './server.ts';
export { HttpError, errorBody, type ErrorBody } from './errors.ts';
export { default as identityPlugin } from './plugins/identity.ts';
export { default as databasePlugin } from './plugins/database.ts';
export { loggerOptions, processLog } from './log.ts';
export { refuseDevelopmentExposure, runService, runServices, runWorkerProcess } from './run.ts';
export { fetchWithTimeout, UpstreamError } from './outbound.ts';
export {
  EDGE_ON_LOOPBACK,
  serviceServerOptions,
  workerLog,
  type AppDeps,
  type Log,
  type WorkerDeps,
  type Workers,
} from './service.ts';
export { default as systemDbPlugin } from './plugins/system-db.ts';
export { default as queuesPlugin } from './plugins/queues.ts';
export { default as redisPlugin } from './plugins/redis.ts';
export { BodyErrors, parseJsonText } from './json-body.ts';
export {
  guardedFetch,
  GuardedFetchError,
  isPublicAddress,
  type FetchedDocument,
  type FetchRefusal,
  type GuardedFetchOptions,
} from './guarded-fetch.ts';
export {
  eventStreams,
  KEEP_ALIVE_MS,
  openEventStream,
  type EventStream,
  type EventStreamOptions,
} from './event-stream.ts';
