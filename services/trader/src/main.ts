import { serviceListenAddress } from '@agentyard/config';
import { createServer, runService } from '@agentyard/http';
import traderApp from './app.ts';
import { loadTraderConfig } from './config.ts';

const config = loadTraderConfig();
const app = createServer({ name: 'trader', logLevel: config.LOG_LEVEL, bodyLimit: config.BODY_LIMIT_BYTES, trustProxy: '127.0.0.1/8,::1' });
await app.register(traderApp, { config });
await runService(app, serviceListenAddress('trader'));
