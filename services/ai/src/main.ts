import { serviceListenAddress } from '@agentyard/config';
import { runService } from '@agentyard/http';
import { buildApp } from './app.ts';
import { loadAiConfig } from './config.ts';

const config = loadAiConfig();
await runService(await buildApp(config), serviceListenAddress('ai'));
