import { Type } from 'typebox';
import { Secret } from '@agentyard/config';

/** Settings of agents, provisioning and the runtime (RUNTIME_DRIVER, DOCKER_HOST and PROVISIONING_ENABLED are base settings). */
export const agentRuntimeSettings = {
  AGENT_IMAGE: Type.String({
    default: '',
    description: 'agent image (docker driver; default localhost/agentyard-openclaw:2026.9.6) or gateway entry script (process driver; default the installed OpenClaw, else the minimal gateway)',
  }),
  RUNTIME_INSTANCE: Type.String({
    default: 'agentyard',
    pattern: '^[A-Za-z0-9_.-]{1,64}$',
    description: "label value marking this platform's containers; the runtime sees only containers carrying it",
  }),
  RUNTIME_PUBLISH_HOST: Type.String({ default: '127.0.0.1', description: 'host address agent gateway ports are published on (and reached at)' }),
  RUNTIME_DATA_DIR: Type.String({ default: '', description: 'process driver: where agent homes live (default <repo>/.cache/runtime)' }),
  RUNTIME_STOP_TIMEOUT_SECONDS: Type.Integer({ minimum: 1, maximum: 120, default: 10 }),
  RUNTIME_ENGINE_TIMEOUT_MS: Type.Integer({ minimum: 1000, default: 15000, description: 'timeout of each container-engine call (the provisioning call timeout of spec §8)' }),
  RUNTIME_NETWORK_MODE: Type.String({ default: '', description: 'docker driver network mode (npm start under Podman: slirp4netns, without host loopback)' }),
  RUNTIME_NETWORK: Type.String({
    default: '',
    pattern: '^([A-Za-z0-9][A-Za-z0-9_.-]{0,127})?$',
    description:
      'docker driver: a user-defined network the agents and scheduler containers share with the agents (docker-compose.yml); each agent joins it and is reached at http://agentyard-agent-<id>:18789, nothing is published and there are no warm containers; empty: gateways are published on RUNTIME_PUBLISH_HOST. Excludes RUNTIME_NETWORK_MODE',
  }),
  RUNTIME_CONFIG_DIR: Type.String({
    default: '',
    description:
      "docker driver on a local engine: host directory of each container's config (mounted read-only) and each agent's state (default <repo>/.cache/runtime/configs); `-` copies configs through the engine API and keeps state in named volumes instead (remote engines; no warm containers)",
  }),
  RUNTIME_PIDS_LIMIT: Type.Integer({ minimum: 64, default: 1024 }),
  RUNTIME_LAUNCH_CONCURRENCY: Type.Integer({
    minimum: 1,
    default: 2,
    description: "containers each process creates and starts at once; later ones wait in arrival order (an engine launches no faster when asked for more at once: about its host's core count)",
  }),
  RUNTIME_WARM_POOL: Type.String({
    default: '',
    pattern: '^([a-z_]+=\\d{1,3}(,[a-z_]+=\\d{1,3})*)?$',
    description:
      "docker driver on a local engine: containers of the default image kept started and waiting per plan (`solo=2,label=4`), so a new agent's gateway starts without waiting for the engine; each holds an idle Node process (about 10 MB here) and no secret until claimed",
  }),
  AGENT_PORT_RANGE: Type.String({ default: '20000-29999', pattern: '^\\d{4,5}-\\d{4,5}$', description: 'host ports agent gateways are published on' }),
  AGENT_READY_TIMEOUT_MS: Type.Integer({ minimum: 1000, default: 180000, description: 'how long a new or updated gateway may take to answer /readyz' }),
  AGENT_OPERATION_WAIT_MS: Type.Integer({
    minimum: 100,
    default: 20000,
    description: 'how long a lifecycle request (start, stop, repair, update…) waits for another operation on the same agent before answering 409; queue jobs put themselves back and look again',
  }),
  AGENT_PROBE_TIMEOUT_MS: Type.Integer({ minimum: 100, default: 5000, description: 'health probe timeout (spec §8: 5 s)' }),
  PROVISIONING_DEADLINE_MS: Type.Integer({ minimum: 10000, default: 600000, description: 'the reconciler moves agents provisioning longer than this to error' }),
  RECONCILE_EVERY_MS: Type.Integer({ minimum: 1000, default: 60000 }),
  AGENT_METRICS_INTERVAL_MS: Type.Integer({
    minimum: 1000,
    default: 60000,
    description: "how often the agents worker samples every running agent's CPU, memory and network from the engine (one stats call each) for /api/metrics",
  }),
  AGENT_METRICS_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 256, default: 8, description: 'stats calls a metrics pass has in flight at once' }),
  AGENT_AI_GATEWAY_URL: Type.String({
    default: 'http://host.containers.internal:3001',
    description: 'the backend edge as agent containers reach it; agents call <url>/v1/chat/completions with their own key',
  }),
  AGENT_DEFAULT_PROVIDER: Type.String({ default: 'openrouter', description: 'AI provider of provisioned agents whose model is not claude-opus-4-6' }),
  AGENT_PUBLIC_URL: Type.String({ default: 'http://127.0.0.1:3001/api/runtime/proxy', description: "agents' public base URL: `<url>/<agentId>` (http) and its ws form" }),
  PROVISION_BACKEND_URL: Type.String({ default: '', description: '/api/provision: an external provisioning backend tried first (POST, JSON); unset: skipped' }),
  PROVISION_FALLBACK_URL: Type.String({ default: '', description: '/api/provision: the fallback backend tried second; unset: skipped' }),
  PROVISION_TIMEOUT_MS: Type.Integer({ minimum: 100, default: 15000, description: 'provisioning backend call timeout (spec §8: 15 s)' }),
  AGENT_GATEWAY_READ_TIMEOUT_MS: Type.Integer({ minimum: 100, default: 10000, description: 'timeout of each read from an agent gateway (its sessions and transcript for /api/agents/:id/messages)' }),
  AGENT_CHAT_TIMEOUT_MS: Type.Integer({ minimum: 1000, default: 180000, description: 'deadline of one web chat turn on an agent gateway (POST /api/chat); past it the caller gets 504' }),
  AGENT_ANSWER_MAX_BYTES: Type.Integer({ minimum: 1024, default: 1048576, description: 'largest answer read from an agent gateway (transcripts, probes); a larger one is a gateway error' }),
  AGENT_VERIFIER_ADDRESS: Type.String({ default: '', pattern: '^(0x[0-9a-fA-F]{40})?$', description: "the platform's verifier address recorded on web verifications; unset: null" }),
  LIVE_STREAM_API_URL: Type.String({ default: 'https://api.mux.com', description: 'live-stream provider base URL (Mux-style `POST /video/v1/live-streams`), called at /api/provision' }),
  LIVE_STREAM_TOKEN_ID: Type.String({ default: '', description: 'live-stream provider access token id; with LIVE_STREAM_TOKEN_SECRET it turns live-stream creation on' }),
  LIVE_STREAM_TOKEN_SECRET: Type.Optional(Secret({ minLength: 1, description: 'live-stream provider access token secret; unset: no live stream is created (streamKey and liveStreamId null)' })),
  LIVE_STREAM_TIMEOUT_MS: Type.Integer({ minimum: 100, default: 10000, description: 'live-stream provider call timeout' }),
  ADMIN_AGENT_LIMIT: Type.Integer({ minimum: 1, default: 100, description: 'agent limit of admins (by session email)' }),
};
