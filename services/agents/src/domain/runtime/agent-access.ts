import { join } from 'node:path';
import { repoRoot } from '@agentyard/config';
import { createRuntimeDriver, type RuntimeDriver } from '@agentyard/runtime';
import type { AgentsConfig } from '../../config.ts';
import { runtimeConfigDir } from './privileged/runtime-context.ts';

/** The runtime driver as the agents' own operations configure it: the same engine, labels and state paths. */
export function agentAccessDriver(config: AgentsConfig): RuntimeDriver {
  return createRuntimeDriver({
    ...config,
    RUNTIME_DATA_DIR: config.RUNTIME_DATA_DIR || join(repoRoot, '.cache/runtime'),
    RUNTIME_CONFIG_DIR: runtimeConfigDir(config),
    repoRoot,
  });
}
