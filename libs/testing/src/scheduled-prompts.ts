import { randomUUID } from 'node:crypto';
import type { Keyring } from '@agentyard/crypto';
import type { SystemDb } from '@agentyard/db/system';
import { sealAgentSecret } from '@agentyard/agent-gateway';

export interface MinuteTasksOptions {
  tasks: number;
  /** Agents the tasks are spread over (round robin), all reached at `gatewayUrl` with `hooksToken`. */
  agents: number;
  gatewayUrl: string;
  hooksToken: string;
  keyring: Keyring;
  /** The tasks' first due time: the next whole minute. */
  firstDue: Date;
  /** Zones the tasks are spread over (default UTC only). */
  zones?: readonly string[];
  /** Missed-run policies the tasks are spread over (default `skip` only). */
  policies?: readonly ('skip' | 'run-once')[];
}

/**
 * One paying user, running agents with sealed hooks tokens, and enabled tasks firing every minute
 * (`* * * * *`): the load of the scheduler's benchmark and fault suite, written straight to the rows.
 */
export async function seedMinuteTasks(
  db: SystemDb,
  options: MinuteTasksOptions,
): Promise<{ userId: string; taskIds: string[] }> {
  const zones = options.zones ?? ['UTC'];
  const policies = options.policies ?? ['skip'];
  const user = await db
    .insertInto('users')
    .values({ email: `scheduled-${randomUUID()}@example.test`, name: 'scheduled prompts' })
    .returning('id')
    .executeTakeFirstOrThrow();
  await db
    .insertInto('subscriptions')
    .values({ id: `sub_scheduled_${randomUUID()}`, user_id: user.id, status: 'active', plan: 'network' })
    .execute();
  const agentIds: string[] = [];
  for (let i = 0; i < Math.min(options.agents, options.tasks); i++) {
    const agent = await db
      .insertInto('agents')
      .values({
        user_id: user.id,
        name: `scheduled-${i}`,
        model: 'm',
        tools_profile: 'messaging',
        subdomain: `sched-${randomUUID().slice(0, 12)}`,
        status: 'running',
        gateway_url: options.gatewayUrl,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    await db
      .updateTable('agents')
      .set({ hooks_token_sealed: sealAgentSecret(options.keyring, agent.id, 'hooks-token', options.hooksToken) })
      .where('id', '=', agent.id)
      .execute();
    agentIds.push(agent.id);
  }
  const taskIds: string[] = [];
  for (let start = 0; start < options.tasks; start += 1000) {
    const batch = Array.from({ length: Math.min(1000, options.tasks - start) }, (_, k) => ({
      user_id: user.id,
      agent_id: agentIds[(start + k) % agentIds.length]!,
      name: `task ${start + k}`,
      cron_schedule: '* * * * *',
      timezone: zones[(start + k) % zones.length]!,
      missed_run_policy: policies[(start + k) % policies.length]!,
      prompt: `scheduled prompt ${start + k}`,
      next_run: options.firstDue,
    }));
    const rows = await db.insertInto('scheduled_tasks').values(batch).returning('id').execute();
    taskIds.push(...rows.map((row) => row.id));
  }
  return { userId: user.id, taskIds };
}
