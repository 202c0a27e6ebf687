import { sql } from 'kysely';
import type { UserTx } from '@agentyard/db';

/** The trading service's job ids (`jobId`): its own alphabet, nothing that reads as a path. */
export const JOB_ID = /^[A-Za-z0-9_-]{1,128}$/;

/** The job id of a trading-service answer to a prompt, when it names one. */
export function jobIdOf(answer: unknown): string | null {
  const jobId = (answer as { jobId?: unknown } | null)?.jobId;
  return typeof jobId === 'string' && JOB_ID.test(jobId) ? jobId : null;
}

/** Binds a job the user started to them (and to the key it was started with); their jobs older than `retentionDays` go. */
export async function recordJob(
  trx: UserTx,
  userId: string,
  jobId: string,
  platformKey: boolean,
  retentionDays: number,
): Promise<void> {
  await trx
    .deleteFrom('trader_jobs')
    .where('created_at', '<', sql<Date>`now() - make_interval(days => ${retentionDays})`)
    .execute();
  await trx
    .insertInto('trader_jobs')
    .values({ user_id: userId, job_id: jobId, platform_key: platformKey })
    .onConflict((oc) => oc.columns(['user_id', 'job_id']).doUpdateSet({ platform_key: platformKey }))
    .execute();
}

/** The user's own job of that id (row-level security: never another user's), if they started it through the relay. */
export async function ownJob(trx: UserTx, jobId: string): Promise<{ platformKey: boolean } | null> {
  const row = await trx.selectFrom('trader_jobs').select('platform_key').where('job_id', '=', jobId).executeTakeFirst();
  return row ? { platformKey: row.platform_key } : null;
}
