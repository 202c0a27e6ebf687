/** The port the agent gateway listens on inside every container. */
export const AGENT_PORT = 18789;

/** Labels every agent container carries, so the platform finds its own containers (and only those). */
export const LABELS = {
  managed: 'agentyard.managed',
  instance: 'agentyard.instance',
  agentId: 'agentyard.agent-id',
  userId: 'agentyard.user-id',
  /** On a container started warm (before any agent needed it): its class, `<image>|<memory bytes>|<cpus>`. Kept once an agent claims it; its name tells whether it still waits. */
  warm: 'agentyard.warm',
  /** On a warm container whose gateway booted with a config of its own: its agent's config replaces that one by the gateway's hot reload. */
  warmBooted: 'agentyard.warm-booted',
} as const;

export interface AgentResources {
  memoryBytes: number;
  cpus: number;
  /** Size of the agent's state filesystem (docker driver on a local engine); the driver's default when absent. */
  diskBytes?: number;
  /** The plan alias these resources are (RESOURCES_BY_ALIAS): the kubernetes driver's per-plan PriorityClass. */
  plan?: string;
}

/** Everything a driver needs to run one agent; `config` is the OpenClaw config file's text. */
export interface AgentContainerSpec {
  agentId: string;
  userId: string;
  image: string;
  hostPort: number;
  config: string;
  /**
   * Secret files the config names (a channel's token file), name → content: written under the
   * agent's state directory (AGENT_SECRETS_DIR, mode 0600) before it starts, replacing the former set.
   */
  secretFiles?: Record<string, string>;
  resources: AgentResources;
  /** The hosts its connected channels call: all the egress proxy lets it reach (egress-grant.ts). */
  egressHosts?: string[];
}

export type ContainerState = 'created' | 'running' | 'stopped' | 'paused' | 'restarting' | 'dead';

export interface ContainerInfo {
  id: string;
  agentId: string;
  userId: string;
  image: string;
  state: ContainerState;
  hostPort: number | null;
  startedAt: string | null;
  /** How the container's last run ended, when it is not running and the driver can tell. */
  lastExit?: ContainerExit | null;
}

/** How a container's run ended: `startedAt` names the run (a restarted container has another). */
export interface ContainerExit {
  startedAt: string;
  finishedAt: string;
  exitCode: number;
  oomKilled: boolean;
}

/** What the engine reported about one of this platform's containers, as it happened. */
export interface ContainerEvent {
  containerId: string;
  /** From the container's name (a claimed warm container is named for its agent); '' when it is no agent's. */
  agentId: string;
  kind: 'die' | 'oom' | 'health';
  /** The engine's time of the event (nanoseconds since the epoch, as text): the same in every follower. */
  time: string;
  exitCode: number | null;
  /** For `health`: healthy, unhealthy, starting. */
  health?: string;
}

export interface ContainerStats {
  cpuPercent: number;
  memoryBytes: number;
  memoryLimitBytes: number;
  /** Bytes received and sent on every interface since the container started; absent where the driver cannot tell. */
  networkRxBytes?: number;
  networkTxBytes?: number;
}

/** One line of an agent's output, with the time the engine recorded it. */
export interface LogLine {
  time: string;
  stream: 'stdout' | 'stderr';
  text: string;
}

/**
 * Containers started before any agent needs them, so an agent's gateway starts without waiting for
 * the engine to create and start a container (on a small host the engine launches one at a time).
 * A warm container holds no secret: it waits for the agent's config file, then runs the image's
 * own command. Only engines the platform shares a filesystem with (config written to a host directory).
 */
export interface WarmPool {
  /**
   * Hands a waiting container of `spec`'s image and resources to the agent (its state and config
   * become the agent's: its gateway starts) and returns it with the host port the engine published
   * it on; null when none waits, or when the agent already has state (which only a new container
   * mounts). `named()` then gives it the agent's name (the engine lists it as the agent's from
   * then on) and fails when the container no longer runs. `booted`: the container's gateway booted
   * ahead and takes the agent's config by hot reload (OpenClaw reconciles a change made while it
   * still boots once its watcher is up, so a booting one is claimed too).
   */
  claim(
    spec: Omit<AgentContainerSpec, 'hostPort'>,
  ): Promise<{ containerId: string; hostPort: number; booted: boolean; named(): Promise<void> } | null>;
  /**
   * Keeps `count` containers waiting per class; removes waiting containers of other classes and
   * stopped ones. Each new container is made once `beforeEach` resolves (to let launches go first).
   * With `boot`, each new container's gateway boots at once with the config `boot` gives it (its
   * own throwaway secrets); without, its launcher waits for its agent's config before booting.
   */
  topUp(wanted: WarmClass[], beforeEach?: () => Promise<void>, boot?: () => WarmBoot): Promise<void>;
  /** Removes every waiting container. */
  drain(): Promise<void>;
  /** How many containers wait unclaimed now (asks the engine). */
  waiting(): Promise<number>;
}

/** A warm container's own gateway config, and what to do once it is started (on the host port the engine published). */
export interface WarmBoot {
  config: string;
  started(hostPort: number): void;
}

export interface WarmClass {
  image: string;
  resources: AgentResources;
  count: number;
}

/** A failure of the container host (engine unreachable, create refused, ...): lifecycle routes answer 500. */
export class RuntimeError extends Error {
  override name = 'RuntimeError';
  /** The host port could not be bound: the caller may retry with another port. */
  readonly portInUse: boolean;
  constructor(message: string, options: { cause?: unknown; portInUse?: boolean } = {}) {
    super(message, { cause: options.cause });
    this.portInUse = options.portInUse ?? false;
  }
}

/**
 * Where agents run. Every operation is idempotent on what it is asked to reach: stopping a
 * stopped container, removing a missing one or removing absent state succeeds.
 */
export interface RuntimeDriver {
  readonly kind: 'docker' | 'process' | 'kubernetes';
  /** The image used when an agent names none. */
  readonly defaultImage: string;
  version(): Promise<{ engine: string; version: string }>;
  /** Creates (not starts) the agent's container with its config and state; returns its id. */
  create(spec: AgentContainerSpec): Promise<string>;
  start(id: string): Promise<void>;
  /**
   * Replaces the config file a container's gateway reads, in place (a whole new file, never half
   * of one): a gateway that watches its config takes it without a restart. The container is kept.
   */
  replaceConfig?(id: string, config: string): Promise<void>;
  /** The config file a container's gateway reads now; null where the driver cannot read it back (a remote engine). */
  readConfig?(id: string): Promise<string | null>;
  stop(id: string): Promise<void>;
  restart(id: string): Promise<void>;
  /** Freezes every process of the container (cgroup freezer) until `unpause`: its files hold still for a copy. */
  pause?(id: string): Promise<void>;
  unpause?(id: string): Promise<void>;
  /** null when the container does not exist. */
  inspect(id: string): Promise<ContainerInfo | null>;
  stats(id: string): Promise<ContainerStats | null>;
  remove(id: string): Promise<void>;
  /** This platform instance's agent containers, optionally only those of one agent. */
  list(filter?: { agentId?: string }): Promise<ContainerInfo[]>;
  /** Removes the agent's memory and identity state (its OpenClaw state directory). */
  removeState(agentId: string): Promise<void>;
  /** The container's last `tail` lines of output, oldest first; absent where the driver keeps none. */
  logs?(id: string, tail: number): Promise<LogLine[]>;
  /** New output lines as they are written, until `signal` aborts (which closes the engine's stream). */
  followLogs?(id: string, signal: AbortSignal): AsyncIterable<LogLine>;
  /**
   * The host directory holding the agent's OpenClaw state (~/.openclaw; its workspace is in it) and
   * the uid its files belong to; null where the platform cannot reach it (a remote engine).
   */
  stateDirectory?(agentId: string): { path: string; ownerUid?: number } | null;
  /**
   * The engine's events about this platform's containers (exits, OOM kills, health changes) from now
   * on, until `signal` aborts; ends when the engine's stream does (the caller follows again and
   * catches up from `inspect`). `onOpen` is called once the engine streams (what happens later is
   * reported). Absent where no engine reports them: the process driver's agents are detached
   * children of whichever process started them, and its supervisor restarts the gateway itself.
   */
  events?(signal: AbortSignal, onOpen?: () => void): AsyncIterable<ContainerEvent>;
  /**
   * The agent has one container whose spec a second `create` replaces (kubernetes: its StatefulSet's
   * template), instead of a new container beside the previous one: an update rolls back by creating
   * the previous spec again, never by removing the new container.
   */
  readonly updatesInPlace?: boolean;
  /** Present when the driver can keep warm containers. */
  readonly warm?: WarmPool;
  /** Where the platform reaches the agent's gateway: published on `hostPort`, or by the agent's name on a shared network. */
  gatewayUrl(hostPort: number, agentId: string): string;
  close(): Promise<void>;
}
