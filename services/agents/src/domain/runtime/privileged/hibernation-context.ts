import type { SystemDb } from '@agentyard/db/system';
import type { AgentActivity } from '@agentyard/queue';
import type { RuntimeDriver } from '@agentyard/runtime';
import type { Redis } from 'ioredis';
import type { AgentRow } from '../../agents/agent-views.ts';
import type { ExclusiveOperation } from '../agent-operations.ts';
import type { HibernationPlans } from '../hibernation-policy.ts';

export interface AgentHibernationOptions {
  db: SystemDb;
  driver: RuntimeDriver;
  redis: Redis;
  /** Key prefix shared by every process of one platform (QUEUE_PREFIX). */
  prefix: string;
  /** The agent's turn, as every container operation takes it. */
  exclusive: ExclusiveOperation;
  /** The same turn for a wake, waiting as long as a boot may take (a second process's wake waits for the first). */
  exclusiveWake: ExclusiveOperation;
  activity: AgentActivity;
  readiness: { waitUntilReady(gatewayUrl: string): Promise<boolean> };
  /** Brings a stopped agent up as a start does, in the caller's turn (the lifecycle's `bringUp`): admitted, on its owner's current plan (throws the refusal). */
  bringUp: (agentId: string) => Promise<unknown>;
  /** Restarts an awake agent (the runtime's restart, in the agent's turn): how a leaking idle gateway is recycled. */
  restart: (agentId: string) => Promise<void>;
  /** Per plan, how long an awake agent may be idle before it is recycled while over `recycleMemoryShare` of its memory. */
  recycleAfter: HibernationPlans;
  recycleMemoryShare: number;
  pauseAfter: HibernationPlans;
  stopAfter: HibernationPlans;
  /** The boot time assumed for an agent never started from a stop here. */
  bootEstimateMs: number;
  sweepEveryMs: number;
  log: { info?(obj: object, msg: string): void; warn(obj: object, msg: string): void };
}

/** The options, and the boot times this process has measured (shared with the others in Redis, under `bootKey`). */
export interface HibernationContext extends AgentHibernationOptions {
  bootKey: string;
  bootMs: Map<string, number>;
}

/** The statuses of an awake agent. */
export const UP: readonly string[] = ['running', 'active'];

/**
 * When each agent was last active: its recorded activity; else, never recorded, when its row last
 * changed (a new agent), but not before the record began: a Redis that came back without its data
 * lost every agent's activity, and an agent busy until then is not idle since its row's last change.
 */
export async function lastActive(activity: AgentActivity, agents: readonly AgentRow[]): Promise<Map<string, number>> {
  const [seen, since] = await Promise.all([activity.lastSeen(agents.map((a) => a.id)), activity.recordedSince()]);
  return new Map(agents.map((a) => [a.id, seen.get(a.id) ?? Math.max(new Date(a.updated_at).getTime(), since)]));
}
