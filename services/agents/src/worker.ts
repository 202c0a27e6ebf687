import { runWorkerProcess } from '@agentyard/http';
import { startWorkers } from './app.ts';
import { loadAgentsConfig } from './config.ts';

const config = loadAgentsConfig();
await runWorkerProcess('agents-worker', config.LOG_LEVEL, (log) => startWorkers(config, { log }));
