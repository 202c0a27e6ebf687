import type { AgentRow } from '../agents/agent-views.ts';

/** How long an agent of each plan may be idle before it is paused, or stopped; null: never. */
export interface HibernationPlans {
  byPlan: Map<string, number | null>;
  fallback: number | null;
}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const DURATION = /^(\d{1,9})(ms|s|m|h|d)$/;
const ENTRY = /^(?:([a-z_]+|\*)=)?(off|\d{1,9}(?:ms|s|m|h|d))$/;
/** The settings' pattern: a duration or `off` for every plan, or per plan (`solo=10m,network=off,*=15m`). */
export const HIBERNATION_SETTING_PATTERN =
  '^((([a-z_]+|\\*)=)?(off|\\d{1,9}(ms|s|m|h|d)))(,(([a-z_]+|\\*)=)?(off|\\d{1,9}(ms|s|m|h|d)))*$';

const durationMs = (text: string): number | null => {
  if (text === 'off') return null;
  const [, n, unit] = DURATION.exec(text)!;
  return Number(n) * UNIT_MS[unit!]!;
};

/** Reads `15m`, `off` or `solo=10m,network=off,*=15m` (a bare value is every other plan's). */
export function parseHibernationPlans(text: string): HibernationPlans {
  const plans: HibernationPlans = { byPlan: new Map(), fallback: null };
  for (const entry of text.split(',').filter(Boolean)) {
    const match = ENTRY.exec(entry.trim());
    if (!match) throw new Error(`not a hibernation setting: ${entry}`);
    const [, plan, value] = match;
    if (!plan || plan === '*') plans.fallback = durationMs(value!);
    else plans.byPlan.set(plan, durationMs(value!));
  }
  return plans;
}

export const afterFor = (plans: HibernationPlans, plan: string): number | null =>
  plans.byPlan.has(plan) ? plans.byPlan.get(plan)! : plans.fallback;

/** The pauses a driver can do: none without a freezer (kubernetes), so its idle agents run until they are stopped. */
export const pausesOf = (pauseAfter: HibernationPlans, canPause: boolean): HibernationPlans =>
  canPause ? pauseAfter : { byPlan: new Map(), fallback: null };

/**
 * Channels that hold a live connection of the agent's own: Telegram's long polling and Discord's
 * gateway socket (OpenClaw's ways for both), Slack's socket mode, WhatsApp's linked-device socket.
 * While one is on, the agent stays awake: paused or stopped, it would miss that channel's messages,
 * and the platform does not receive them itself to wake it (Telegram's webhook mode pointed at the
 * platform would let it; not built). Web chat, the Control UI, scheduled prompts, heartbeats and the
 * bus all come through the platform, which wakes the agent first: they can hibernate.
 */
export const LIVE_CONNECTION_CHANNELS: readonly string[] = [
  'telegram',
  'discord',
  'slack',
  'whatsapp',
  'signal',
  'matrix',
  'msteams',
];

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The agent's channels that are on and need a live connection, read from its configuration (`channels.<name>`). */
export function channelsKeepingAwake(config: Record<string, unknown>): string[] {
  const channels = isRecord(config.channels) ? config.channels : {};
  return LIVE_CONNECTION_CHANNELS.filter((name) => {
    const channel = channels[name];
    if (!isRecord(channel)) return false;
    // On when switched on, or when it holds a credential and is not switched off.
    return (
      channel.enabled === true ||
      (channel.enabled !== false && ['botToken', 'token', 'tokenFile', 'appToken'].some((key) => key in channel))
    );
  });
}

/** Whether an idle agent may be stopped (and paused): none of its channels needs a live connection. */
/** An agent's view for hibernation: its row and the channels bound to it in the vault and switched on (a bound Telegram channel runs whatever its config says). */
export type HibernatingAgent = Pick<AgentRow, 'id' | 'status' | 'hibernation' | 'plan' | 'config'> & {
  boundChannels?: readonly string[];
};

export const agentMayHibernate = (agent: Pick<HibernatingAgent, 'config' | 'boundChannels'>): boolean =>
  channelsKeepingAwake(agent.config ?? {}).length === 0 &&
  !(agent.boundChannels ?? []).some((name) => LIVE_CONNECTION_CHANNELS.includes(name));

export interface HibernationSettings {
  pauseAfter: HibernationPlans;
  stopAfter: HibernationPlans;
  /** How long before a due prompt a stopped agent is started: its boot time and the sweep's period, with room. */
  wakeLeadMs: (agentId: string) => number;
  /** How long an awake agent may be idle, and up, before it is restarted while over `recycleMemoryShare` of its memory; null: never. */
  recycleAfter?: HibernationPlans;
  /** The share (0–1) of its plan's memory an idle agent's gateway may hold before it is recycled (OpenClaw's gateway is known to leak). */
  recycleMemoryShare?: number;
}

export type HibernationStep = 'pause' | 'stop' | 'wake' | 'recycle' | null;

/** An awake agent's memory as last sampled (its share of its plan's memory, or null), and how long since its row last changed (a restart changes it). */
export interface AgentMemory {
  share: number | null;
  upForMs: number;
}

/**
 * What the sweep does to one agent now: pause an idle running one, stop one paused long enough,
 * wake a stopped one whose next scheduled prompt or heartbeat is closer than its wake lead. An agent
 * is never stopped when its next due prompt comes sooner than it could boot again.
 */
export function hibernationStep(
  agent: HibernatingAgent,
  idleMs: number,
  nextDueInMs: number | null,
  settings: HibernationSettings,
  memory?: AgentMemory,
): HibernationStep {
  const lead = settings.wakeLeadMs(agent.id);
  const dueSoon = nextDueInMs !== null && nextDueInMs <= lead;
  if (agent.status === 'suspended') {
    if (agent.hibernation === 'stopped') return dueSoon ? 'wake' : null;
    const stopAfter = afterFor(settings.stopAfter, agent.plan);
    return stopAfter !== null && idleMs >= stopAfter && !dueSoon && agentMayHibernate(agent) ? 'stop' : null;
  }
  if (agent.status !== 'running' && agent.status !== 'active') return null;
  if (agentMayHibernate(agent)) {
    const pauseAfter = afterFor(settings.pauseAfter, agent.plan);
    const stopAfter = afterFor(settings.stopAfter, agent.plan);
    if (pauseAfter !== null && idleMs >= pauseAfter) return 'pause';
    // Plans that stop without pausing first.
    if (pauseAfter === null && stopAfter !== null && idleMs >= stopAfter && !dueSoon) return 'stop';
  }
  // Awake and idle (kept awake by a channel, or its plan never hibernates), holding too much memory: a restart gives it back.
  const recycleAfter = settings.recycleAfter ? afterFor(settings.recycleAfter, agent.plan) : null;
  if (recycleAfter === null || !memory || memory.share === null || settings.recycleMemoryShare === undefined)
    return null;
  return idleMs >= recycleAfter &&
    memory.upForMs >= recycleAfter &&
    memory.share >= settings.recycleMemoryShare &&
    !dueSoon
    ? 'recycle'
    : null;
}
