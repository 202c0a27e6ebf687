import { serviceListenAddress } from '@agentyard/config';
import { createServer, runService } from '@agentyard/http';
import agentsApp from './app.ts';
import { loadAgentsConfig } from './config.ts';

const config = loadAgentsConfig();
const app = createServer({ name: 'agents', logLevel: config.LOG_LEVEL, bodyLimit: config.BODY_LIMIT_BYTES, trustProxy: '127.0.0.1/8,::1' });
await app.register(agentsApp, { config });
await runService(app, serviceListenAddress('agents'));
