import { runWorkerProcess } from '@agentyard/http';
import { startWorkers } from './app.ts';
import { loadBridgeConfig } from './config.ts';

const config = loadBridgeConfig();
await runWorkerProcess('bridge-worker', config.LOG_LEVEL, (log) => startWorkers(config, { log }));
