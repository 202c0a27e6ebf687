import type { UserTx } from '@agentyard/db';
import { sql } from 'kysely';

/** The thread a trading-service answer names (`threadId`), when it names one the relay can bind. */
export function threadIdOf(answer: unknown): string | null {
  const threadId = (answer as { threadId?: unknown } | null)?.threadId;
  return typeof threadId === 'string' && threadId.length >= 1 && threadId.length <= 200 ? threadId : null;
}

/** Binds a thread to the user (and to the key it runs on), or marks it used again; their threads unused for `retentionDays` go. */
export async function recordThread(
  trx: UserTx,
  userId: string,
  threadId: string,
  platformKey: boolean,
  retentionDays: number,
): Promise<void> {
  await trx
    .deleteFrom('trader_threads')
    .where('last_used_at', '<', sql<Date>`now() - make_interval(days => ${retentionDays})`)
    .execute();
  await trx
    .insertInto('trader_threads')
    .values({ user_id: userId, thread_id: threadId, platform_key: platformKey })
    .onConflict((oc) =>
      oc.columns(['user_id', 'thread_id']).doUpdateSet({ platform_key: platformKey, last_used_at: sql<Date>`now()` }),
    )
    .execute();
}

/** The user's own thread of that id (row-level security: never another user's), if it was started through the relay. */
export async function ownThread(trx: UserTx, threadId: string): Promise<{ platformKey: boolean } | null> {
  const row = await trx
    .selectFrom('trader_threads')
    .select('platform_key')
    .where('thread_id', '=', threadId)
    .executeTakeFirst();
  return row ? { platformKey: row.platform_key } : null;
}
