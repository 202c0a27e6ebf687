import { serviceListenAddress } from '@agentyard/config';
import { createServer, runService } from '@agentyard/http';
import aiApp from './app.ts';
import { loadAiConfig } from './config.ts';

const config = loadAiConfig();
const app = createServer({ name: 'ai', logLevel: config.LOG_LEVEL, bodyLimit: config.BODY_LIMIT_BYTES, trustProxy: '127.0.0.1/8,::1' });
await app.register(aiApp, { config });
await runService(app, serviceListenAddress('ai'));
