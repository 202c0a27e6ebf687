import { serviceListenAddress } from '@agentyard/config';
import { createServer, runService } from '@agentyard/http';
import schedulerApp from './app.ts';
import { loadSchedulerConfig } from './config.ts';

const config = loadSchedulerConfig();
const app = createServer({ name: 'scheduler', logLevel: config.LOG_LEVEL, bodyLimit: config.BODY_LIMIT_BYTES, trustProxy: '127.0.0.1/8,::1' });
await app.register(schedulerApp, { config });
await runService(app, serviceListenAddress('scheduler'));
