import { runWorkerProcess } from '@agentyard/http';
import { loadSchedulerConfig } from './config.ts';
import { startSchedulerWorkers } from './queue-workers.ts';

const config = loadSchedulerConfig();
await runWorkerProcess('scheduler-worker', config.LOG_LEVEL, (log) => startSchedulerWorkers(config, { log }));
