import { Type } from 'typebox';
import { ConfigError, loadConfig, Secret } from '@agentyard/config';
import { agentRuntimeSettings } from './domain/agents/settings.ts';

/** Settings of the agents service (agents, provisioning, runtime, workspace: config, devices, workflows, stats). */
export const agentsSettings = {
  ...agentRuntimeSettings,
  ENCRYPTION_KEYS: Secret({ minLength: 40, description: 'AES-256-GCM keys `id:base64key,...`, first is current: per-agent tokens at rest' }),
  AGENTS_PROVISIONING_CONCURRENCY: Type.Integer({
    minimum: 1,
    default: 32,
    description: 'provisioning jobs each agents worker process runs at once (a job mostly waits for a gateway to become ready)',
  }),
  CONTROL_UI_ROOT: Type.String({
    default: '',
    description:
      "the platform's own copy of the OpenClaw Control UI (a built dist/control-ui), served at /api/control-ui/:agentId/ instead of the agent's; default: the installed OpenClaw's; none there: that route answers 503",
  }),
  WORKFLOWS_PER_USER_MAX: Type.Integer({ minimum: 1, maximum: 100_000, default: 100, description: 'workflows one user may have; creating one more answers 429 WORKFLOW_LIMIT' }),
};

export function loadAgentsConfig(env?: Record<string, string | undefined>) {
  const config = loadConfig(agentsSettings, env ? { env, files: false } : {});
  // Process agents run as this platform's own OS user, with its secrets and database in reach.
  if (config.NODE_ENV === 'production' && config.RUNTIME_DRIVER === 'process') {
    throw new ConfigError(
      "RUNTIME_DRIVER=process is refused in production: agents would run as the platform's own OS user, with its secrets in reach. Run them in containers (RUNTIME_DRIVER=docker with a container engine at DOCKER_HOST).",
    );
  }
  return config;
}

export type AgentsConfig = ReturnType<typeof loadAgentsConfig>;
