import { runWorkerProcess } from '@agentyard/http';
import { loadAuthConfig } from './config.ts';
import { startAuthWorkers } from './queue-workers.ts';

const config = loadAuthConfig();
await runWorkerProcess('auth-worker', config.LOG_LEVEL, (log) => startAuthWorkers(config, { log }));
