// Security events act on whichever users they name: cross-user work through the system connection,
// used by the receiver (to record the event once) and by the worker (to apply it).
import { sql, type Database, type Transaction } from '@agentyard/db';
import type { SystemDb } from '@agentyard/db/system';
import { SECURITY_EVENT_KINDS, type SecurityEventToken } from '../security-events.ts';

export type MatchBy = 'subject-or-email' | 'email';

/** Records the event once by `jti`; true when it still needs applying (new, or not yet applied). */
export async function recordSecurityEvent(db: SystemDb, token: SecurityEventToken, matchBy: MatchBy): Promise<boolean> {
  await db
    .insertInto('risc_events')
    .values({ jti: token.jti, issuer: token.iss, match_by: matchBy, events: JSON.stringify(token.events) as never })
    .onConflict((oc) => oc.column('jti').doNothing())
    .execute();
  const row = await db
    .selectFrom('risc_events')
    .select('processed_at')
    .where('jti', '=', token.jti)
    .executeTakeFirstOrThrow();
  return row.processed_at === null;
}

type Tx = Transaction<Database>;

/** The users an event's subject names: by the Google subject id, or by email. */
async function matchUsers(trx: Tx, data: Record<string, unknown>, matchBy: MatchBy): Promise<string[]> {
  const subject = (data.subject && typeof data.subject === 'object' ? data.subject : {}) as Record<string, unknown>;
  const ids = new Set<string>();
  if (matchBy === 'subject-or-email' && typeof subject.sub === 'string' && subject.sub) {
    const linked = await trx
      .selectFrom('provider_accounts')
      .select('user_id')
      .where('provider', '=', 'google')
      .where('provider_subject', '=', subject.sub)
      .execute();
    for (const row of linked) ids.add(row.user_id);
  }
  if (typeof subject.email === 'string' && subject.email) {
    const byEmail = await trx
      .selectFrom('users')
      .select('id')
      .where(sql<boolean>`lower(email) = lower(${subject.email})`)
      .execute();
    for (const row of byEmail) ids.add(row.id);
  }
  return [...ids];
}

async function endAllSessions(trx: Tx, users: string[]): Promise<number> {
  const result = await trx.deleteFrom('sessions').where('user_id', 'in', users).executeTakeFirst();
  return Number(result.numDeletedRows);
}

async function setExternalSignIn(trx: Tx, users: string[], disabled: boolean): Promise<void> {
  await trx
    .updateTable('users')
    .set({ external_signin_disabled: disabled, updated_at: sql`now()` as unknown as Date })
    .where('id', 'in', users)
    .execute();
}

/** Applies a recorded event once (a repeat finds it applied and does nothing); returns what it did. */
export async function applySecurityEvent(db: SystemDb, jti: string): Promise<Record<string, unknown> | null> {
  return db.transaction().execute(async (trx) => {
    const event = await trx
      .selectFrom('risc_events')
      .selectAll()
      .where('jti', '=', jti)
      .where('processed_at', 'is', null)
      .forUpdate()
      .executeTakeFirst();
    if (!event) return null;
    const outcome: Record<string, unknown> = {};
    for (const [kind, raw] of Object.entries(event.events)) {
      const data = (raw && typeof raw === 'object' ? raw : {}) as Record<string, unknown>;
      const users = await matchUsers(trx, data, event.match_by);
      const done: Record<string, unknown> = { users: users.length };
      if (users.length > 0) {
        switch (kind) {
          case SECURITY_EVENT_KINDS.accountDisabled:
            if (data.reason === 'hijacking') {
              await setExternalSignIn(trx, users, true);
              done.externalSignInDisabled = true;
            }
            done.sessionsEnded = await endAllSessions(trx, users);
            break;
          case SECURITY_EVENT_KINDS.accountEnabled:
            await setExternalSignIn(trx, users, false);
            done.externalSignInDisabled = false;
            break;
          case SECURITY_EVENT_KINDS.sessionsRevoked:
            done.sessionsEnded = await endAllSessions(trx, users);
            break;
          case SECURITY_EVENT_KINDS.tokensRevoked: {
            const result = await trx
              .updateTable('provider_accounts')
              .set({
                access_token_sealed: null,
                refresh_token_sealed: null,
                token_metadata_sealed: null,
                updated_at: sql`now()` as unknown as Date,
              })
              .where('provider', '=', 'google')
              .where('user_id', 'in', users)
              .executeTakeFirst();
            done.tokensDeleted = Number(result.numUpdatedRows);
            break;
          }
          default:
            // account-credential-change-required, verification and unknown kinds: recorded only.
            done.recorded = true;
        }
      }
      outcome[kind] = done;
    }
    await trx
      .updateTable('risc_events')
      .set({ processed_at: new Date(), outcome: JSON.stringify(outcome) as never })
      .where('jti', '=', jti)
      .execute();
    return outcome;
  });
}
