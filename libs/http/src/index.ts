export { createServer, type ServiceApp, type ServerOptions } from './server.ts';
export { HttpError, httpError, errorBody, type ErrorBody } from './errors.ts';
export { default as identityPlugin, type RouteAuth } from './plugins/identity.ts';
export { default as databasePlugin } from './plugins/database.ts';
export { loggerOptions } from './log.ts';
export { runService, runServices, runWorkerProcess } from './run.ts';
export { fetchWithTimeout, UpstreamError } from './outbound.ts';
export { EDGE_ON_LOOPBACK, serviceServerOptions, workerLog, type AppDeps, type WorkerDeps, type Workers } from './service.ts';
