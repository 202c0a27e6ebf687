import { serviceListenAddress } from '@agentyard/config';
import { createServer, runService } from '@agentyard/http';
import bridgeApp from './app.ts';
import { loadBridgeConfig } from './config.ts';

const config = loadBridgeConfig();
const app = createServer({ name: 'bridge', logLevel: config.LOG_LEVEL, bodyLimit: config.BODY_LIMIT_BYTES, trustProxy: '127.0.0.1/8,::1' });
await app.register(bridgeApp, { config });
await runService(app, serviceListenAddress('bridge'));
