import { sql, withUser, type AppDb, type UserTx } from '@agentyard/db';
import { appDb, systemDb } from './database.ts';

/** Opens every connection of the shared runtime pool, so requests fired together really run together. */
export async function warmAppPool(connections = 8): Promise<void> {
  await Promise.all(Array.from({ length: connections }, () => sql`select pg_sleep(0.05)`.execute(appDb())));
}

async function someoneWaitsOnALock(until: () => boolean): Promise<void> {
  while (!until()) {
    const { rows } = await sql<{
      n: number;
    }>`select count(*)::int as n from pg_locks where not granted and database = (select oid from pg_database where datname = current_database())`.execute(
      systemDb(),
    );
    if (rows[0]!.n > 0) return;
  }
}

/**
 * The interleaving a per-user cap must survive: `first` runs as `userId` and its transaction stays
 * open (not committed) while `second` starts; once `second` waits on a lock (or has ended), `first`
 * commits. Answers how each ended. Without a lock, `second` counts before `first` commits and both pass.
 */
export async function againstAnOpenTransaction<A, B>(
  userId: string,
  first: (trx: UserTx) => Promise<A>,
  second: () => Promise<B>,
  db: AppDb = appDb(),
) {
  let commit = () => {};
  const held = new Promise<void>((resolve) => {
    commit = resolve;
  });
  let ran = () => {};
  const firstRan = new Promise<void>((resolve) => {
    ran = resolve;
  });
  const firstDone = withUser(db, userId, async (trx) => {
    try {
      return await first(trx);
    } finally {
      ran();
      await held;
    }
  });
  await firstRan;
  let secondEnded = false;
  const secondDone = second().finally(() => {
    secondEnded = true;
  });
  await Promise.race([secondDone.catch(() => {}), someoneWaitsOnALock(() => secondEnded)]);
  commit();
  return Promise.allSettled([firstDone, secondDone]);
}
