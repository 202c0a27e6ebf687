import { serviceListenAddress } from '@agentyard/config';
import { createServer, runService } from '@agentyard/http';
import authApp from './app.ts';
import { loadAuthConfig } from './config.ts';

const config = loadAuthConfig();
const app = createServer({ name: 'auth', logLevel: config.LOG_LEVEL, bodyLimit: config.BODY_LIMIT_BYTES, trustProxy: '127.0.0.1/8,::1' });
await app.register(authApp, { config });
await runService(app, serviceListenAddress('auth'));
