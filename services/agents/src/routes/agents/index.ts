import type { ServiceApp } from '@agentyard/http';
import { createQueues } from '@agentyard/queue';
import type { AgentsConfig } from '../../config.ts';
import { createRuntimeContext } from '../../domain/agents/runtime-context-system.ts';
import agentRecordRoutes from './records.ts';
import provisioningRoutes from './provisioning.ts';
import lifecycleRoutes from './lifecycle.ts';
import runtimeRoutes from './runtime.ts';
import gatewayProxyRoutes from './gateway-proxies.ts';
import instanceRoutes from './instance.ts';
import messageRoutes from './messages.ts';
import verificationRoutes from './verification.ts';
import agentConfigRoutes from './agent-config.ts';
import agentWorkRoutes from '../agent-work/index.ts';
import type { AgentRouteDeps } from './deps.ts';

/** Agents, provisioning, lifecycle and the runtime (spec §4.5), on both surfaces. */
export default async function agentRoutes(app: ServiceApp, { config }: { config: AgentsConfig }) {
  const context = createRuntimeContext(config, app.log);
  const queues = createQueues({ redisUrl: config.REDIS_URL, prefix: config.QUEUE_PREFIX, log: app.log });
  app.addHook('onClose', async () => {
    await queues.close();
    await context.close();
  });
  const deps: AgentRouteDeps = { config, context, queues };
  await app.register(agentRecordRoutes, deps);
  await app.register(provisioningRoutes, deps);
  await app.register(lifecycleRoutes, deps);
  await app.register(runtimeRoutes, deps);
  await app.register(instanceRoutes, deps);
  await app.register(messageRoutes, deps);
  await app.register(verificationRoutes, deps);
  await app.register(agentConfigRoutes, deps);
  await app.register(agentWorkRoutes, deps);
  await app.register(gatewayProxyRoutes, deps);
}

export type { AgentRouteDeps } from './deps.ts';
