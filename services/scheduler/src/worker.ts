import { runWorkerProcess } from '@agentyard/http';
import { startWorkers } from './app.ts';
import { loadSchedulerConfig } from './config.ts';

const config = loadSchedulerConfig();
await runWorkerProcess('scheduler-worker', config.LOG_LEVEL, (log) => startWorkers(config, { log }));
