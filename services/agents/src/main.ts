import { serviceListenAddress } from '@agentyard/config';
import { runService } from '@agentyard/http';
import { buildApp } from './app.ts';
import { loadAgentsConfig } from './config.ts';

const config = loadAgentsConfig();
await runService(await buildApp(config), serviceListenAddress('agents'));
