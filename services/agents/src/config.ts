import { Type } from 'typebox';
import { ConfigError, loadConfig, Secret } from '@agentyard/config';
import { kubernetesDriverOptions } from '@agentyard/runtime';
import { agentRuntimeSettings } from './domain/runtime/runtime-settings.ts';

/** Settings of the agents service (agents, provisioning, runtime, workspace: config, devices, workflows, stats). */
export const agentsSettings = {
  ...agentRuntimeSettings,
  ENCRYPTION_KEYS: Secret({
    minLength: 40,
    description: 'AES-256-GCM keys `id:base64key,...`, first is current: per-agent tokens at rest',
  }),
  EGRESS_GRANT_KEY: Type.Optional(
    Secret({
      minLength: 32,
      description:
        "with RUNTIME_EGRESS_PROXY: the HMAC key of each agent's egress grant (the hosts its connected channels need, in its proxy URL), shared with the egress proxy, which lets an agent reach only those; production requires it there",
    }),
  ),
  AGENTS_PROVISIONING_CONCURRENCY: Type.Integer({
    minimum: 1,
    default: 32,
    description:
      "provisioning jobs, and lifecycle jobs (owners' web operations, configuration rebuilds), each agents worker process runs at once (a job mostly waits for a gateway to become ready)",
  }),
  CONTROL_UI_ROOT: Type.String({
    default: '',
    description:
      "the platform's own copy of the OpenClaw Control UI (a built dist/control-ui), served at /api/control-ui/:agentId/ instead of the agent's; default: the installed OpenClaw's; none there: that route answers 503",
  }),
  SNAPSHOT_STORE: Type.Union([Type.Literal('directory'), Type.Literal('s3')], {
    default: 'directory',
    description:
      "where agents' snapshot archives are kept: `directory` (SNAPSHOT_DIR, which the agents service and its worker must share) or `s3` (a bucket of S3 or an S3-compatible service: SNAPSHOT_S3_*)",
  }),
  SNAPSHOT_DIR: Type.String({
    default: '',
    description:
      "SNAPSHOT_STORE=directory: the directory of agents' snapshot archives (of the agents service and its worker); default: .cache/snapshots of the checkout",
  }),
  SNAPSHOT_S3_BUCKET: Type.String({
    default: '',
    description: 'SNAPSHOT_STORE=s3: the bucket snapshot archives are kept in (required with it)',
  }),
  SNAPSHOT_S3_REGION: Type.String({ default: 'us-east-1', description: "SNAPSHOT_STORE=s3: the bucket's region" }),
  SNAPSHOT_S3_ENDPOINT: Type.String({
    default: '',
    description:
      'SNAPSHOT_STORE=s3: the URL of an S3-compatible service (MinIO, Ceph, R2, ...), addressed path-style (`<endpoint>/<bucket>/<key>`); unset: AWS S3',
  }),
  SNAPSHOT_S3_PREFIX: Type.String({
    default: '',
    pattern: "^[A-Za-z0-9!_.*'()/-]*$",
    description:
      'SNAPSHOT_STORE=s3: put before every object key (e.g. `snapshots/`); keys are `<prefix><snapshot id>.tar.gz`',
  }),
  SNAPSHOT_S3_ACCESS_KEY_ID: Type.String({
    default: '',
    description:
      "SNAPSHOT_STORE=s3: the access key id, with SNAPSHOT_S3_SECRET_ACCESS_KEY; both unset: the AWS SDK's default credential chain (AWS_* variables, shared files, container or instance role)",
  }),
  SNAPSHOT_S3_SECRET_ACCESS_KEY: Type.Optional(
    Secret({ minLength: 1, description: 'SNAPSHOT_STORE=s3: the secret access key of SNAPSHOT_S3_ACCESS_KEY_ID' }),
  ),
  SNAPSHOT_S3_TIMEOUT_MS: Type.Integer({
    minimum: 100,
    default: 60_000,
    description:
      'SNAPSHOT_STORE=s3: the longest wait for a connection, for the answer to one request (a part sent included), and between two bytes of one transfer; then the request fails (retried twice)',
  }),
  PLAN_GRACE_PERIOD_MS: Type.Integer({
    minimum: 0,
    default: 259_200_000,
    description:
      "how long an agent its owner's plan no longer covers (a cancelled subscription, a lower plan) runs on before it is stopped (3 days; 0: at once); its state is kept",
  }),
  SNAPSHOT_SCHEDULE_EVERY_MS: Type.Integer({
    minimum: 1000,
    default: 86_400_000,
    description:
      "how often each agent gets a scheduled snapshot (daily by default), kept per its plan's number (solo 3, collective 7, label 14, network 30; free none)",
  }),
  SNAPSHOT_SWEEP_EVERY_MS: Type.Integer({
    minimum: 200,
    default: 3_600_000,
    description:
      'how often the agents worker looks for agents due for their scheduled snapshot (one worker acts each time)',
  }),
  SNAPSHOT_ABANDONED_AFTER_MS: Type.Integer({
    minimum: 1000,
    default: 600_000,
    description:
      'how old a snapshot still pending with no job or copy under way must be before the reconciler fails it (a copy whose process died); its partial archive is removed',
  }),
  AGENT_TELEGRAM_API_ROOT: Type.String({
    default: '',
    description:
      "development and tests only (refused in production): the Telegram Bot API root agents' Telegram channels call instead of https://api.telegram.org (OpenClaw's channels.telegram.apiRoot), e.g. a local server speaking the Bot API",
  }),
  INSTALLATION_OFFLINE_AFTER_SECONDS: Type.Integer({
    minimum: 30,
    maximum: 86_400,
    default: 600,
    description:
      'a linked installation without a heartbeat for this long lists as offline (the scripts send one every 5 minutes from cron)',
  }),
  SWARM_RUN_CONCURRENCY: Type.Integer({
    minimum: 1,
    maximum: 64,
    default: 4,
    description: "swarm runs each agents worker process runs at once (each waits for every member's turn)",
  }),
  WORKFLOWS_PER_USER_MAX: Type.Integer({
    minimum: 1,
    maximum: 100_000,
    default: 100,
    description: 'workflows one user may have; creating one more answers 429 WORKFLOW_LIMIT',
  }),
};

export function loadAgentsConfig(env?: Record<string, string | undefined>) {
  const config = loadConfig(agentsSettings, env ? { env, files: false } : {});
  // Process agents run as this platform's own OS user, with its secrets and database in reach.
  if (config.NODE_ENV === 'production' && config.RUNTIME_DRIVER === 'process') {
    throw new ConfigError(
      "RUNTIME_DRIVER=process is refused in production: agents would run as the platform's own OS user, with its secrets in reach. Run them in containers (RUNTIME_DRIVER=docker with a container engine at DOCKER_HOST).",
    );
  }
  if (config.RUNTIME_DRIVER === 'kubernetes') {
    try {
      kubernetesDriverOptions(config, config.AGENT_IMAGE);
    } catch (error) {
      throw new ConfigError(`RUNTIME_DRIVER=kubernetes: ${(error as Error).message}`);
    }
  }
  // One allow-list for every agent would let any agent reach every channel's hosts (and more).
  if (config.NODE_ENV === 'production' && config.RUNTIME_EGRESS_PROXY && !config.EGRESS_GRANT_KEY) {
    throw new ConfigError(
      "RUNTIME_EGRESS_PROXY needs EGRESS_GRANT_KEY in production (the egress proxy's too): each agent reaches only its channels' hosts (npm run secrets makes one)",
    );
  }
  // A bot token sent to another Bot API root is handed to whoever runs it.
  if (config.NODE_ENV === 'production' && config.AGENT_TELEGRAM_API_ROOT) {
    throw new ConfigError(
      "AGENT_TELEGRAM_API_ROOT is refused in production: agents' Telegram bot tokens would go to that server instead of Telegram. It is for development and tests only.",
    );
  }
  if (config.AGENT_TELEGRAM_API_ROOT && !/^https?:\/\/[^/]+\/?$/.test(config.AGENT_TELEGRAM_API_ROOT)) {
    throw new ConfigError(
      'AGENT_TELEGRAM_API_ROOT must be a Bot API root (http(s)://host[:port], without /bot<token>)',
    );
  }
  if (config.SNAPSHOT_STORE === 's3' && !config.SNAPSHOT_S3_BUCKET) {
    throw new ConfigError('SNAPSHOT_STORE=s3 needs SNAPSHOT_S3_BUCKET: the bucket snapshot archives are kept in');
  }
  if (Boolean(config.SNAPSHOT_S3_ACCESS_KEY_ID) !== Boolean(config.SNAPSHOT_S3_SECRET_ACCESS_KEY)) {
    throw new ConfigError(
      "SNAPSHOT_S3_ACCESS_KEY_ID and SNAPSHOT_S3_SECRET_ACCESS_KEY go together: set both, or neither for the AWS SDK's default credential chain",
    );
  }
  if (config.SNAPSHOT_S3_ENDPOINT && !/^https?:\/\/[^/]+\/?$/.test(config.SNAPSHOT_S3_ENDPOINT)) {
    throw new ConfigError(
      'SNAPSHOT_S3_ENDPOINT must be the URL of an S3-compatible service (http(s)://host[:port]), without a bucket or path',
    );
  }
  return config;
}

export type AgentsConfig = ReturnType<typeof loadAgentsConfig>;
