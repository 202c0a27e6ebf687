/** The port the agent gateway listens on inside every container (spec §8). */
export const AGENT_PORT = 18789;

/** Labels every agent container carries, so the platform finds its own containers (and only those). */
export const LABELS = {
  managed: 'agentyard.managed',
  instance: 'agentyard.instance',
  agentId: 'agentyard.agent-id',
  userId: 'agentyard.user-id',
} as const;

export interface AgentResources {
  memoryBytes: number;
  cpus: number;
}

/** Everything a driver needs to run one agent; `config` is the OpenClaw config file's text. */
export interface AgentContainerSpec {
  agentId: string;
  userId: string;
  image: string;
  hostPort: number;
  config: string;
  resources: AgentResources;
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
}

export interface ContainerStats {
  cpuPercent: number;
  memoryBytes: number;
  memoryLimitBytes: number;
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
  readonly kind: 'docker' | 'process';
  /** The image used when an agent names none. */
  readonly defaultImage: string;
  version(): Promise<{ engine: string; version: string }>;
  /** Creates (not starts) the agent's container with its config and state; returns its id. */
  create(spec: AgentContainerSpec): Promise<string>;
  start(id: string): Promise<void>;
  stop(id: string): Promise<void>;
  restart(id: string): Promise<void>;
  /** null when the container does not exist. */
  inspect(id: string): Promise<ContainerInfo | null>;
  stats(id: string): Promise<ContainerStats | null>;
  remove(id: string): Promise<void>;
  /** This platform instance's agent containers, optionally only those of one agent. */
  list(filter?: { agentId?: string }): Promise<ContainerInfo[]>;
  /** Removes the agent's memory and identity state (its OpenClaw state directory). */
  removeState(agentId: string): Promise<void>;
  /** Where the platform reaches a gateway published on `hostPort`. */
  gatewayUrl(hostPort: number): string;
  close(): Promise<void>;
}
