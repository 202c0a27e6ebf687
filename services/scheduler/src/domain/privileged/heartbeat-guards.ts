import { sql } from '@agentyard/db';
import type { SystemDb } from '@agentyard/db/system';
import { invokeGatewayTool, type GatewayToolTarget } from '@agentyard/agent-gateway';

/** Why a heartbeat did not go while the owner's monthly spend limit is reached. */
export const SPEND_LIMIT_MESSAGE =
  "Paused: this month's spend limit is reached (resumes next month or when the limit is raised)";
/** Why a heartbeat paused itself: nobody has talked with the agent for `days` days. */
export const idleMessage = (days: number, since: Date) =>
  `Paused: nobody has talked with the agent for more than ${days} days (last conversation ${since.toISOString()}); enable the heartbeat again to resume`;

/**
 * Whether the owner's AI spend this month (UTC, the usage rows written) has reached the monthly
 * limit they set (spending_limits): the AI gateway refuses their calls then, so a heartbeat would
 * only wake the agent into a refusal.
 */
export async function spendLimitReached(db: SystemDb, userId: string): Promise<boolean> {
  const { rows } = await sql<{ reached: boolean }>`
    select coalesce(sum(d.cost_usd), 0) >= l.monthly_usd as reached
    from spending_limits l
    left join usage_daily d on d.user_id = l.user_id and d.day >= date_trunc('month', now() at time zone 'UTC')::date
    where l.user_id = ${userId} and l.monthly_usd is not null
    group by l.monthly_usd`.execute(db);
  return rows[0]?.reached === true;
}

// Sessions no person talks in: the main session (where heartbeats themselves land) and the platform's
// and the gateway's automated ones. The gateway stores keys under its agent (`agent:<id>:<key>`).
const AUTOMATED = /^(main$|scheduled:|hook:|cron:|swarm:|agentyard:swarm:|subagent:|acp:|heartbeat)/;
const ownKey = (key: string) => key.replace(/^agent:[^:]+:/, '');

/**
 * When someone last talked with the agent, if that is more than `idleDays` ago: the latest update of
 * any session a person talks in (web chat, channels), or the agent's creation when there is none.
 * Null when it is more recent, or when the gateway cannot tell (the heartbeat goes then).
 */
export async function conversationsIdleSince(
  target: GatewayToolTarget,
  agentCreatedAt: Date,
  idleDays: number,
  timeoutMs: number,
  now = new Date(),
): Promise<Date | null> {
  let listed: Record<string, unknown>;
  try {
    listed = await invokeGatewayTool(target, 'sessions_list', { limit: 200 }, timeoutMs);
  } catch {
    return null;
  }
  let latest = agentCreatedAt.getTime();
  for (const raw of Array.isArray(listed.sessions) ? listed.sessions : []) {
    const session = (raw ?? {}) as { key?: unknown; updatedAt?: unknown };
    if (typeof session.key !== 'string' || AUTOMATED.test(ownKey(session.key))) continue;
    const at = new Date(session.updatedAt as string | number).getTime();
    if (Number.isFinite(at)) latest = Math.max(latest, at);
  }
  return now.getTime() - latest > idleDays * 86_400_000 ? new Date(latest) : null;
}
