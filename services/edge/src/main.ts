import { createAppDb } from '@agentyard/db';
import { createServer, runServices } from '@agentyard/http';
import edgeSurface from './app.ts';
import { loadEdgeConfig } from './config.ts';
import { startLoadMonitor } from './health.ts';
import { rateLimitRedis } from './rate-limits.ts';
import { agentRoutes } from './routing.ts';

const config = loadEdgeConfig();
const db = createAppDb(config.DATABASE_URL, { max: config.DATABASE_POOL_SIZE, applicationName: 'edge' });
const redis = rateLimitRedis(config.REDIS_URL);
const health = startLoadMonitor();
const trustProxy = config.TRUST_PROXY || false;

const web = createServer({ name: 'edge-web', logLevel: config.LOG_LEVEL, bodyLimit: config.BODY_LIMIT_BYTES, trustProxy, parseJson: false });
await web.register(edgeSurface, { surface: 'web', config, db, redis, health });
const backend = createServer({ name: 'edge-backend', logLevel: config.LOG_LEVEL, bodyLimit: config.BODY_LIMIT_BYTES, trustProxy, parseJson: false });
await backend.register(edgeSurface, { surface: 'backend', config, db, redis, health });

const listeners = [
  { app: web, address: { host: config.EDGE_WEB_HOST, port: config.EDGE_WEB_PORT } },
  { app: backend, address: { host: config.EDGE_BACKEND_HOST, port: config.EDGE_BACKEND_PORT } },
];
if (config.EDGE_AGENT_HOST) {
  // Agent containers reach the platform here, never through the host's loopback (where PostgreSQL
  // and Redis listen): only the backend routes that authenticate their caller themselves.
  const agents = createServer({ name: 'edge-agents', logLevel: config.LOG_LEVEL, bodyLimit: config.BODY_LIMIT_BYTES, trustProxy, parseJson: false });
  await agents.register(edgeSurface, { surface: 'backend', config, db, redis, health, routes: agentRoutes() });
  listeners.push({ app: agents, address: { host: config.EDGE_AGENT_HOST, port: config.EDGE_AGENT_PORT } });
}

if (config.NODE_ENV === 'production' && !config.INTERNAL_API_KEY) web.log.warn('INTERNAL_API_KEY is not set: the backend surface answers 500 Server misconfigured');
await runServices(listeners, async () => {
  health.stop();
  redis.disconnect();
  await db.destroy();
});
