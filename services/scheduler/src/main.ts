import { serviceListenAddress } from '@agentyard/config';
import { runService } from '@agentyard/http';
import { buildApp } from './app.ts';
import { loadSchedulerConfig } from './config.ts';

const config = loadSchedulerConfig();
await runService(await buildApp(config), serviceListenAddress('scheduler'));
