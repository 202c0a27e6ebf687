// Admin-only listing of every user's invites: cross-user, so it reads through the system connection.
// Only the admin invite routes (auth 'admin', checked before any handler runs) import this module.
import type { Keyring } from '@agentyard/crypto';
import { decodeCursor, pageOf, pastPosition, positionAt, sql } from '@agentyard/db';
import type { SystemDb } from '@agentyard/db/system';
import { SignInErrors } from '../../errors.ts';
import { INVITE_SEAL_CONTEXT } from '../invites.ts';

type Status = 'active' | 'used' | 'expired';

/** One page of every invite, newest first ((created_at, id) descending); `total` and `active` count them all. */
export async function listAllInvites(db: SystemDb, keyring: Keyring, page: { limit: number; cursor?: string }) {
  const after = page.cursor === undefined ? null : decodeCursor(page.cursor, 'uuid');
  if (page.cursor !== undefined && !after) throw SignInErrors.invalidCursor();
  let query = db
    .selectFrom('invites')
    .select([
      'id',
      'token_sealed',
      'email',
      'created_at',
      'used_at',
      'used_by',
      'expires_at',
      positionAt('created_at').as('page_at'),
    ]);
  if (after) query = query.where(pastPosition('created_at', 'id', after, 'desc', 'uuid'));
  const [rows, counts] = await Promise.all([
    query
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(page.limit + 1)
      .execute(),
    db
      .selectFrom('invites')
      .select([
        sql<string>`count(*)`.as('total'),
        sql<string>`count(*) filter (where used_at is null and expires_at > now())`.as('active'),
      ])
      .executeTakeFirstOrThrow(),
  ]);
  const { rows: pageRows, nextCursor } = pageOf(rows, page.limit, (row) => ({ at: row.page_at, id: row.id }));
  const now = Date.now();
  const invites = pageRows.map((row) => {
    const status: Status = row.used_at ? 'used' : new Date(row.expires_at).getTime() <= now ? 'expired' : 'active';
    return {
      code: keyring.decrypt(row.token_sealed, INVITE_SEAL_CONTEXT),
      email: row.email,
      createdAt: row.created_at.toISOString(),
      ...(row.used_at ? { usedAt: new Date(row.used_at).toISOString() } : {}),
      status,
      ...(row.used_by ? { userId: row.used_by } : {}),
    };
  });
  return { invites, total: Number(counts.total), active: Number(counts.active), nextCursor };
}
