import { serviceListenAddress } from '@agentyard/config';
import { runService } from '@agentyard/http';
import { buildApp } from './app.ts';
import { loadTraderConfig } from './config.ts';

const config = loadTraderConfig();
await runService(await buildApp(config), serviceListenAddress('trader'));
