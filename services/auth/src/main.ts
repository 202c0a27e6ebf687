import { serviceListenAddress } from '@agentyard/config';
import { runService } from '@agentyard/http';
import { buildApp } from './app.ts';
import { loadAuthConfig } from './config.ts';

const config = loadAuthConfig();
await runService(await buildApp(config), serviceListenAddress('auth'));
