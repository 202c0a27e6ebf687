import type { QueueSet } from '@agentyard/queue';
import type { AgentsConfig } from '../../config.ts';
import type { RuntimeContext } from '../../domain/runtime/privileged/runtime-context.ts';

/** What every agents route plugin is given; a leaf, so route files never import the plugin that registers them. */
export type AgentRouteDeps = {
  config: AgentsConfig;
  context: RuntimeContext;
  queues: QueueSet;
};
