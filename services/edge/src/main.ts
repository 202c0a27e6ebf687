import { runServices } from '@agentyard/http';
import { buildApp } from './app.ts';
import { loadEdgeConfig } from './config.ts';

const edge = await buildApp(loadEdgeConfig());
await runServices(edge.listeners, edge.release);
