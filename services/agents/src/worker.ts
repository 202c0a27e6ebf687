import { runWorkerProcess } from '@agentyard/http';
import { loadAgentsConfig } from './config.ts';
import { startAgentWorkers } from './domain/agents/workers.ts';

const config = loadAgentsConfig();
await runWorkerProcess('agents-worker', config.LOG_LEVEL, (log) => startAgentWorkers(config, log));
