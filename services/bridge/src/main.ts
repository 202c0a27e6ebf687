import { serviceListenAddress } from '@agentyard/config';
import { runService } from '@agentyard/http';
import { buildApp } from './app.ts';
import { loadBridgeConfig } from './config.ts';

const config = loadBridgeConfig();
await runService(await buildApp(config), serviceListenAddress('bridge'));
