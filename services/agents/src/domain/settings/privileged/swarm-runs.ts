import { runAgentTurn, openAgentSecret } from '@agentyard/agent-gateway';
import type { Keyring } from '@agentyard/crypto';
import type { SwarmMemberStatus } from '@agentyard/db';
import type { SystemDb } from '@agentyard/db/system';
import { HttpError } from '@agentyard/http';
import { spendExhaustedSetKey } from '@agentyard/proto-schemas';
import type { Redis } from 'ioredis';
import type { AgentRow } from '../../agents/agent-views.ts';
import { runningAgentGateway } from '../../gateway/agent-gateway-access.ts';
import { runChatTurn } from '../../gateway/chat.ts';

export interface SwarmRunContext {
  db: SystemDb;
  keyring: Keyring;
  /** The AI gateway's set of users whose allowance and credits are spent is read here. */
  redis: Redis;
  queuePrefix: string;
  turnTimeoutMs: number;
  maxAnswerBytes: number;
  /** Wakes a hibernating member before its turn and keeps it awake through it (the runtime's hibernation). */
  hibernation: { reach(agent: AgentRow): Promise<AgentRow>; hold(agentId: string): Promise<() => void> };
}

export const SPEND_EXHAUSTED = "Not sent: this month's AI allowance and credits are spent";
const FIRST_ANSWERED = 'Cancelled: another member answered first';

interface Outcome {
  status: SwarmMemberStatus;
  answer?: string | null;
  error?: string | null;
  tokens?: number | null;
}

/** A failure as a member's row shows it: the platform's own message for an HttpError, else a short generic one. */
const failureOf = (error: unknown) =>
  (error instanceof HttpError ? error.message : 'Agent gateway unavailable').slice(0, 500);

/** Whether the owner's AI spend is exhausted; unanswered, it is not (the AI gateway still refuses the spend itself). */
async function spendExhausted(ctx: SwarmRunContext, userId: string): Promise<boolean> {
  try {
    return (await ctx.redis.sismember(spendExhaustedSetKey(ctx.queuePrefix), userId)) === 1;
  } catch {
    return false;
  }
}

/**
 * Runs one swarm run: every member not yet settled gets the message as a turn, at once. `broadcast`
 * hands it to the agent's hooks as a scheduled prompt is (`POST /hooks/agent`, which answers once the
 * agent took it); `all` and `first` run the turn on the agent's gateway and keep its answer (its model
 * calls go through the AI gateway, which holds them to the owner's budget); at the first answer
 * `first` cancels the rest. Each member's row is written as it settles, so the owner watches the run
 * fill. A repeat of the job (a crashed worker) sends only to members not settled.
 */
export async function processSwarmRun(ctx: SwarmRunContext, runId: string): Promise<string> {
  const run = await ctx.db
    .selectFrom('swarm_runs')
    .select(['id', 'swarm_id', 'user_id', 'mode', 'message', 'status'])
    .where('id', '=', runId)
    .executeTakeFirst();
  if (!run || run.status === 'completed' || run.status === 'failed') return 'settled already';
  await ctx.db.updateTable('swarm_runs').set({ status: 'running' }).where('id', '=', runId).execute();
  const members = await ctx.db
    .selectFrom('swarm_run_members as m')
    .leftJoin('agents as a', (join) => join.onRef('a.id', '=', 'm.agent_id').onRef('a.user_id', '=', 'm.user_id'))
    .selectAll('a')
    .select(['m.agent_id as member_id', 'm.status as member_status'])
    .where('m.run_id', '=', runId)
    .where('m.status', 'in', ['pending', 'running'])
    .execute();
  const exhausted = await spendExhausted(ctx, run.user_id);
  const cancel = new AbortController();
  let answered = false;

  const settle = (agentId: string, outcome: Outcome) =>
    ctx.db
      .updateTable('swarm_run_members')
      .set({
        status: outcome.status,
        answer: outcome.answer ?? null,
        error: outcome.error ?? null,
        tokens: outcome.tokens ?? null,
        finished_at: new Date(),
      })
      .where('run_id', '=', runId)
      .where('agent_id', '=', agentId)
      .execute();

  const turnOf = async (member: (typeof members)[number]): Promise<Outcome> => {
    if (!member.id) return { status: 'skipped', error: 'The agent was deleted' };
    // A hibernating member is woken for its turn, as for any other request that needs it.
    if (member.status !== 'running' && member.status !== 'suspended')
      return { status: 'skipped', error: `The agent was ${member.status}` };
    if (exhausted) return { status: 'skipped', error: SPEND_EXHAUSTED };
    await ctx.db
      .updateTable('swarm_run_members')
      .set({ status: 'running', started_at: new Date() })
      .where('run_id', '=', runId)
      .where('agent_id', '=', member.member_id)
      .execute();
    let release = () => {};
    try {
      const agent = await ctx.hibernation.reach(member as unknown as AgentRow);
      release = await ctx.hibernation.hold(agent.id);
      if (run.mode === 'broadcast') {
        if (!agent.gateway_url || !agent.hooks_token_sealed)
          return { status: 'failed', error: 'The agent has no hooks endpoint' };
        const target = {
          baseUrl: agent.gateway_url,
          hooksToken: openAgentSecret(ctx.keyring, agent.id, 'hooks-token', agent.hooks_token_sealed),
        };
        await runAgentTurn(
          target,
          {
            message: run.message,
            name: 'Swarm',
            sessionKey: `swarm:${run.swarm_id}`,
            timeoutSeconds: Math.ceil(ctx.turnTimeoutMs / 1000),
          },
          ctx.turnTimeoutMs,
        );
        return { status: 'delivered' };
      }
      const gateway = runningAgentGateway(agent, ctx.keyring);
      const answer = await runChatTurn(
        gateway,
        { sessionKey: `agentyard:swarm:${run.swarm_id}`, message: run.message },
        ctx.turnTimeoutMs,
        ctx.maxAnswerBytes,
        cancel.signal,
      );
      return { status: 'answered', answer: answer.content, tokens: answer.usage?.totalTokens ?? null };
    } catch (error) {
      if (cancel.signal.aborted) return { status: 'skipped', error: FIRST_ANSWERED };
      return { status: 'failed', error: failureOf(error) };
    } finally {
      release();
    }
  };

  const outcomes = await Promise.all(
    members.map(async (member) => {
      const outcome = await turnOf(member);
      // `first`: the first answer settles the run; the turns still running are cancelled.
      if (outcome.status === 'answered' && run.mode === 'first') {
        if (answered) return settle(member.member_id, { status: 'skipped', error: FIRST_ANSWERED }).then(() => outcome);
        answered = true;
        cancel.abort();
      }
      await settle(member.member_id, outcome);
      return outcome;
    }),
  );
  const settled = await ctx.db.selectFrom('swarm_run_members').select('status').where('run_id', '=', runId).execute();
  const anyTook = settled.some((m) => m.status === 'answered' || m.status === 'delivered');
  await ctx.db
    .updateTable('swarm_runs')
    .set({ status: anyTook ? 'completed' : 'failed', finished_at: new Date() })
    .where('id', '=', runId)
    .execute();
  return `${outcomes.filter((o) => o.status === 'answered' || o.status === 'delivered').length} of ${outcomes.length} members took it`;
}
