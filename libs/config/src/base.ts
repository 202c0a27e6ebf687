import { Type, type TSchema, type TString } from 'typebox';

/** A secret setting: never logged, required in production, generated for development. */
export function Secret(options: { minLength?: number; description?: string } = {}): TString {
  return Type.String({ minLength: options.minLength ?? 16, description: options.description, secret: true });
}

export function isSecret(schema: TSchema): boolean {
  return (schema as { secret?: unknown }).secret === true;
}

/** Settings every process reads; services add their own next to these. */
export const baseConfigSchema = {
  NODE_ENV: Type.Union([Type.Literal('development'), Type.Literal('test'), Type.Literal('production')], {
    default: 'development',
    description: 'production refuses to start without its secrets',
  }),
  LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)),
    { default: 'info', description: 'pino log level; secrets are redacted at every level' },
  ),
  DATABASE_URL: Type.String({
    default: 'postgres://agentyard_app@127.0.0.1:5432/agentyard',
    description: 'runtime role (NOSUPERUSER, NOBYPASSRLS): web requests',
  }),
  DATABASE_SYSTEM_URL: Type.String({
    default: 'postgres://agentyard_system@127.0.0.1:5432/agentyard',
    description: 'system role (BYPASSRLS): workers and API-key routes',
  }),
  DATABASE_POOL_SIZE: Type.Integer({ minimum: 1, default: 10, description: 'connections per pool and process' }),
  REDIS_URL: Type.String({ default: 'redis://127.0.0.1:6379', description: 'queues and rate-limit counters' }),
  QUEUE_PREFIX: Type.String({
    default: 'agentyard',
    pattern: '^[A-Za-z0-9_:-]+$',
    description: 'Redis key prefix of queues and rate limits',
  }),
  IDENTITY_SECRET: Secret({ minLength: 32, description: 'HMAC key of the edge-to-service identity header' }),
  IDENTITY_TTL_SECONDS: Type.Integer({
    minimum: 1,
    maximum: 300,
    default: 30,
    description: 'lifetime of one signed identity header',
  }),
  ADMIN_EMAILS: Type.String({ default: '', description: 'comma-separated admin emails, case-insensitive' }),
  SUBSCRIPTION_ACTIVE_STATUSES: Type.String({
    default: 'active,trialing',
    description: 'Stripe subscription statuses that count as active (the plan function reads them in every service)',
  }),
  PUBLIC_BASE_URL: Type.String({
    default: 'http://127.0.0.1:3000',
    description: 'where web clients reach the web surface',
  }),
  BODY_LIMIT_BYTES: Type.Integer({ minimum: 1024, default: 1048576, description: 'largest request body (413 above)' }),
  PROVISIONING_ENABLED: Type.Boolean({
    default: true,
    description: 'kill switch: false refuses new provisioning with 503',
  }),
  RUNTIME_DRIVER: Type.Union([Type.Literal('docker'), Type.Literal('process'), Type.Literal('kubernetes')], {
    default: 'docker',
    description:
      'where agents run: a container engine, supervised local processes, or a Kubernetes cluster (KUBERNETES_* settings; docs/deploying-kubernetes.md)',
  }),
  DOCKER_HOST: Type.String({
    default: 'unix:///var/run/docker.sock',
    description: 'Docker Engine or Podman API (unix:///run/podman/podman.sock)',
  }),
};
