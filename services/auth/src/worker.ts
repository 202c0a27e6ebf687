import { runWorkerProcess } from '@agentyard/http';
import { startWorkers } from './app.ts';
import { loadAuthConfig } from './config.ts';

const config = loadAuthConfig();
await runWorkerProcess('auth-worker', config.LOG_LEVEL, (log) => startWorkers(config, { log }));
