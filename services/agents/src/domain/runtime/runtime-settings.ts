import { Type } from 'typebox';
import { Secret } from '@agentyard/config';
import { HIBERNATION_SETTING_PATTERN } from './hibernation-policy.ts';

/** Settings of agents, provisioning and the runtime (RUNTIME_DRIVER, DOCKER_HOST and PROVISIONING_ENABLED are base settings; KUBERNETES_* for RUNTIME_DRIVER=kubernetes). */
export const agentRuntimeSettings = {
  AGENT_IMAGE: Type.String({
    default: '',
    description:
      'agent image (docker driver; default localhost/agentyard-openclaw:2026.9.6) or gateway entry script (process driver; default the installed OpenClaw, else the minimal gateway)',
  }),
  AGENT_IMAGES_ALLOWED: Type.String({
    default: '',
    pattern: '^([^\\s,]+(,[^\\s,]+)*)?$',
    description:
      "images an owner may update an agent to from the web (POST /api/agents/:id/update {image}), comma-separated, beside the default image (always allowed); the backend's update takes any",
  }),
  RUNTIME_INSTANCE: Type.String({
    default: 'agentyard',
    pattern: '^[A-Za-z0-9_.-]{1,64}$',
    description: "label value marking this platform's containers; the runtime sees only containers carrying it",
  }),
  RUNTIME_PUBLISH_HOST: Type.String({
    default: '127.0.0.1',
    description: 'host address agent gateway ports are published on (and reached at)',
  }),
  RUNTIME_DATA_DIR: Type.String({
    default: '',
    description: 'process driver: where agent homes live (default <repo>/.cache/runtime)',
  }),
  RUNTIME_STOP_TIMEOUT_SECONDS: Type.Integer({ minimum: 1, maximum: 120, default: 10 }),
  RUNTIME_ENGINE_TIMEOUT_MS: Type.Integer({
    minimum: 1000,
    default: 15000,
    description: 'timeout of each container-engine call (the provisioning call timeout)',
  }),
  RUNTIME_NETWORK_MODE: Type.String({
    default: '',
    description: 'docker driver network mode (npm start under Podman: slirp4netns, without host loopback)',
  }),
  RUNTIME_NETWORK: Type.String({
    default: '',
    pattern: '^([A-Za-z0-9][A-Za-z0-9_.-]{0,127})?$',
    description:
      'docker driver: the internal network of the containers that call agents (docker-compose.yml); each agent gets an internal network of its own, <name>-<agent id>, which containers labelled agentyard.agent-peer join, and is reached there at http://agentyard-agent-<id>:18789; nothing is published and there are no warm containers; empty: gateways are published on RUNTIME_PUBLISH_HOST. Excludes RUNTIME_NETWORK_MODE',
  }),
  RUNTIME_EGRESS_PROXY: Type.String({
    default: '',
    description:
      "agents' HTTP(S)_PROXY (docker-compose.yml: the egress proxy, their only way out of the internal agents' network; kubernetes driver: named by its IPv4 address, which each agent's NetworkPolicy lets out to); the AI gateway's host is reached directly; empty: none",
  }),
  RUNTIME_EGRESS_UNCONFINED: Type.Boolean({
    default: false,
    description:
      "production: start agents although their egress is not confined (neither an internal RUNTIME_NETWORK nor the host's egress rules for RUNTIME_NETWORK_MODE); only where the host confines agents' traffic by other means (docs/operations.md)",
  }),
  RUNTIME_CONFIG_DIR: Type.String({
    default: '',
    description:
      "docker driver on a local engine: host directory of each container's config (mounted read-only) and each agent's state (default <repo>/.cache/runtime/configs); `-` copies configs through the engine API and keeps state in named volumes instead (remote engines; no warm containers)",
  }),
  RUNTIME_PIDS_LIMIT: Type.Integer({ minimum: 64, default: 1024 }),
  KUBERNETES_KUBECONFIG: Type.String({
    default: '',
    description:
      "kubernetes driver: the kubeconfig file of the agents' cluster; empty: the pod's service account inside a cluster, else ~/.kube/config (docs/deploying-kubernetes.md)",
  }),
  KUBERNETES_NAMESPACE: Type.String({
    default: 'agentyard-agents',
    pattern: '^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$',
    description:
      "kubernetes driver: the namespace agents' StatefulSets, claims, Secrets, Services and NetworkPolicies are made in (not the platform's own)",
  }),
  KUBERNETES_STORAGE_CLASS: Type.String({
    default: '',
    pattern: '^([a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?)?$',
    description:
      "kubernetes driver: the StorageClass of agents' state claims (a cluster's provisioner); excludes KUBERNETES_LOCAL_STORAGE_DIR",
  }),
  KUBERNETES_LOCAL_STORAGE_DIR: Type.String({
    default: '',
    pattern: '^(/.*)?$',
    description:
      "kubernetes driver without a provisioner: the directory (on the nodes, and on this host: the platform reads agents' files there) under which each agent gets a `local` PersistentVolume; excludes KUBERNETES_STORAGE_CLASS",
  }),
  KUBERNETES_LOCAL_STORAGE_NODES: Type.String({
    default: '',
    pattern: '^([a-z0-9][-a-z0-9.]*(,[a-z0-9][-a-z0-9.]*)*)?$',
    description:
      'kubernetes driver with KUBERNETES_LOCAL_STORAGE_DIR: the nodes that share that directory (comma-separated node names), where agents may be scheduled',
  }),
  KUBERNETES_PLATFORM_CIDRS: Type.String({
    default: '',
    pattern: '^(\\d{1,3}(\\.\\d{1,3}){3}/\\d{1,2}(,\\d{1,3}(\\.\\d{1,3}){3}/\\d{1,2})*)?$',
    description:
      "kubernetes driver (required with it): where the platform's callers of agents are, IPv4 CIDRs, comma-separated: the only sources each agent's NetworkPolicy lets in to its gateway port",
  }),
  KUBERNETES_AGENT_LISTENERS: Type.String({
    default: '',
    pattern: '^(\\d{1,3}(\\.\\d{1,3}){3}:\\d{1,5}(,\\d{1,3}(\\.\\d{1,3}){3}:\\d{1,5})*)?$',
    description:
      "kubernetes driver: the platform's agent listener(s) as IPV4:PORT, the only destinations (with DNS) each agent's NetworkPolicy lets out to; empty: AGENT_AI_GATEWAY_URL's address, which must then be an IPv4 address",
  }),
  KUBERNETES_IMAGE_PULL_POLICY: Type.Union(
    [Type.Literal('IfNotPresent'), Type.Literal('Always'), Type.Literal('Never')],
    {
      default: 'IfNotPresent',
      description:
        "kubernetes driver: the agent container's imagePullPolicy (`Never` where images are imported into the nodes, as on the test cluster)",
    },
  ),
  KUBERNETES_PLAN_PRIORITY_CLASSES: Type.Boolean({
    default: false,
    description:
      "kubernetes driver: agent pods get `priorityClassName: agentyard-plan-<plan alias>` (starter, pro, scale, enterprise, white-glove, underground): the cluster's PriorityClasses and the per-plan ResourceQuotas scoped by them must exist, or pods are refused",
  }),
  RUNTIME_LAUNCH_CONCURRENCY: Type.Integer({
    minimum: 1,
    default: 2,
    description:
      "containers each process creates and starts at once; later ones wait in arrival order (an engine launches no faster when asked for more at once: about its host's core count)",
  }),
  RUNTIME_WARM_POOL: Type.String({
    default: '',
    pattern: '^([a-z_]+=\\d{1,3}(,[a-z_]+=\\d{1,3})*)?$',
    description:
      "docker driver on a local engine: containers of the default image kept started and waiting per plan (`solo=2,label=4`), so a new agent's gateway starts without waiting for the engine (see RUNTIME_WARM_BOOT); none holds a secret of any agent until claimed",
  }),
  RUNTIME_WARM_BOOT: Type.Union([Type.Literal('booted'), Type.Literal('on-claim')], {
    default: 'booted',
    description:
      "warm containers' gateways: `booted` boot at once with throwaway secrets of their own and take their agent's config by hot reload when claimed (about 1.4 GB each while waiting; needs an image whose gateway hot-reloads, as OpenClaw does and the minimal stand-in does not); `on-claim` wait in an idle Node process (about 10 MB) and boot once claimed",
  }),
  OPENCLAW_CONFIG_VALIDATOR: Type.String({
    default: '',
    description:
      "the OpenClaw whose `openclaw config validate` checks every agent configuration an owner saves (its openclaw.mjs, the version the agent image runs); default: the one infra/agent-image/build.sh installs; `-`: none (saves are checked by the platform's own rules only, and their answers say so)",
  }),
  OPENCLAW_VALIDATE_TIMEOUT_MS: Type.Integer({
    minimum: 1000,
    maximum: 120_000,
    default: 30_000,
    description: 'how long one `openclaw config validate` may take before the save answers 503',
  }),
  HIBERNATE_PAUSE_AFTER: Type.String({
    default: '15m',
    pattern: HIBERNATION_SETTING_PATTERN,
    description:
      'how long an agent may be idle before it is paused (engine pause: memory kept, no CPU): a duration (`500ms`, `30s`, `15m`, `2h`) or `off`, for every plan or per plan (`solo=10m,network=off,*=15m`); anything that needs the agent wakes it first. Ignored with RUNTIME_DRIVER=kubernetes (no freezer in its API): idle agents run until HIBERNATE_STOP_AFTER',
  }),
  HIBERNATE_STOP_AFTER: Type.String({
    default: '6h',
    pattern: HIBERNATION_SETTING_PATTERN,
    description:
      'how long an agent may be idle before it is stopped (state disk kept; the next request boots it), same form as HIBERNATE_PAUSE_AFTER',
  }),
  HIBERNATE_SWEEP_EVERY_MS: Type.Integer({
    minimum: 200,
    default: 30_000,
    description:
      'how often the agents worker looks for idle agents to pause or stop, and stopped ones to start ahead of a due prompt (one worker acts each time)',
  }),
  AGENT_RECYCLE_IDLE_AFTER: Type.String({
    default: '30m',
    pattern: HIBERNATION_SETTING_PATTERN,
    description:
      "how long an awake agent (kept awake by a channel, or on a plan that does not hibernate) may be idle, and up, before it is restarted while its gateway holds more than AGENT_RECYCLE_MEMORY_PERCENT of its plan's memory; same form as HIBERNATE_PAUSE_AFTER",
  }),
  AGENT_RECYCLE_MEMORY_PERCENT: Type.Number({
    minimum: 0.001,
    maximum: 100,
    default: 80,
    description:
      "the share of its plan's memory an idle agent's gateway may hold before it is recycled (OpenClaw's gateway is known to leak); read from the metrics sampler's last sample",
  }),
  HIBERNATE_ACTIVITY_EVERY_MS: Type.Integer({
    minimum: 100,
    default: 10_000,
    description:
      "an agent's activity is written to Redis at most this often per process (and this often during a long turn or an open socket)",
  }),
  HIBERNATE_BOOT_ESTIMATE_MS: Type.Integer({
    minimum: 1000,
    default: 30_000,
    description:
      "an agent's boot time before one was measured here: a stopped agent is started this long (times 1.5, plus the sweep's period) ahead of its next scheduled prompt",
  }),
  AGENT_PORT_RANGE: Type.String({
    default: '20000-29999',
    pattern: '^\\d{4,5}-\\d{4,5}$',
    description: 'host ports agent gateways are published on',
  }),
  AGENT_READY_TIMEOUT_MS: Type.Integer({
    minimum: 1000,
    default: 180000,
    description: 'how long a new or updated gateway may take to answer /readyz',
  }),
  AGENT_OPERATION_WAIT_MS: Type.Integer({
    minimum: 100,
    default: 20000,
    description:
      'how long a lifecycle request (start, stop, repair, update…) waits for another operation on the same agent before answering 409; queue jobs put themselves back and look again',
  }),
  AGENT_PROBE_TIMEOUT_MS: Type.Integer({ minimum: 100, default: 5000, description: 'health probe timeout' }),
  PROVISIONING_DEADLINE_MS: Type.Integer({
    minimum: 10000,
    default: 600000,
    description: 'the reconciler moves agents provisioning longer than this to error',
  }),
  RECONCILE_EVERY_MS: Type.Integer({ minimum: 1000, default: 60000 }),
  AGENT_METRICS_INTERVAL_MS: Type.Integer({
    minimum: 1000,
    default: 60000,
    description:
      "how often the agents worker samples every running agent's CPU, memory and network from the engine (one stats call each) for /api/metrics",
  }),
  AGENT_METRICS_CONCURRENCY: Type.Integer({
    minimum: 1,
    maximum: 256,
    default: 8,
    description: 'stats calls a metrics pass has in flight at once',
  }),
  AGENT_AI_GATEWAY_URL: Type.String({
    default: 'http://host.containers.internal:3001',
    description:
      'the backend edge as agent containers reach it; agents call <url>/v1/chat/completions with their own key',
  }),
  AGENT_DEFAULT_PROVIDER: Type.String({
    default: 'openrouter',
    description: 'AI provider of provisioned agents whose model is not claude-opus-4-6',
  }),
  AGENT_PUBLIC_URL: Type.String({
    default: 'http://127.0.0.1:3001/api/runtime/proxy',
    description: "agents' public base URL: `<url>/<agentId>` (http) and its ws form",
  }),
  PROVISION_BACKEND_URL: Type.String({
    default: '',
    description: '/api/provision: an external provisioning backend tried first (POST, JSON); unset: skipped',
  }),
  PROVISION_FALLBACK_URL: Type.String({
    default: '',
    description: '/api/provision: the fallback backend tried second; unset: skipped',
  }),
  PROVISION_TIMEOUT_MS: Type.Integer({
    minimum: 100,
    default: 15000,
    description: 'provisioning backend call timeout',
  }),
  AGENT_GATEWAY_READ_TIMEOUT_MS: Type.Integer({
    minimum: 100,
    default: 10000,
    description:
      'timeout of each read from an agent gateway (its sessions and transcript for /api/agents/:id/messages)',
  }),
  AGENT_CHAT_TIMEOUT_MS: Type.Integer({
    minimum: 1000,
    default: 180000,
    description: 'deadline of one web chat turn on an agent gateway (POST /api/chat); past it the caller gets 504',
  }),
  AGENT_ANSWER_MAX_BYTES: Type.Integer({
    minimum: 1024,
    default: 1048576,
    description: 'largest answer read from an agent gateway (transcripts, probes); a larger one is a gateway error',
  }),
  AGENT_VERIFIER_ADDRESS: Type.String({
    default: '',
    pattern: '^(0x[0-9a-fA-F]{40})?$',
    description: "the platform's verifier address recorded on web verifications; unset: null",
  }),
  LIVE_STREAM_API_URL: Type.String({
    default: 'https://api.mux.com',
    description: 'live-stream provider base URL (Mux-style `POST /video/v1/live-streams`), called at /api/provision',
  }),
  LIVE_STREAM_TOKEN_ID: Type.String({
    default: '',
    description: 'live-stream provider access token id; with LIVE_STREAM_TOKEN_SECRET it turns live-stream creation on',
  }),
  LIVE_STREAM_TOKEN_SECRET: Type.Optional(
    Secret({
      minLength: 1,
      description:
        'live-stream provider access token secret; unset: no live stream is created (streamKey and liveStreamId null)',
    }),
  ),
  LIVE_STREAM_TIMEOUT_MS: Type.Integer({
    minimum: 100,
    default: 10000,
    description: 'live-stream provider call timeout',
  }),
  AGENT_MEMORY_PER_USER_MAX_GB: Type.Number({
    exclusiveMinimum: 0,
    default: 64,
    description:
      "plans without an agent limit (network): the most memory (GiB) one user's running agents hold together; past it starting or provisioning one more answers 429 AGENT_RESOURCES_LIMIT",
  }),
  AGENT_CPUS_PER_USER_MAX: Type.Number({
    exclusiveMinimum: 0,
    default: 32,
    description: "plans without an agent limit (network): the most CPUs one user's running agents hold together",
  }),
  PLATFORM_AGENTS_MAX: Type.Integer({
    minimum: 0,
    default: 1000,
    description:
      'the most agents running (or being provisioned) across every user; past it provisioning and starting answer 503 PLATFORM_AT_CAPACITY (0: no cap)',
  }),
  PLATFORM_AGENT_MEMORY_MAX_GB: Type.Number({
    minimum: 0,
    default: 0,
    description:
      "the most memory (GiB) the running agents of every user hold together, by their plans' container sizes; past it as PLATFORM_AGENTS_MAX (0: no cap)",
  }),
  ADMIN_AGENT_LIMIT: Type.Integer({
    minimum: 1,
    default: 100,
    description: 'agent limit of admins (by session email)',
  }),
};
