// Admin-only listing of every user's invites: cross-user, so it reads through the system connection.
// Only the admin invite routes (auth 'admin', checked before any handler runs) import this module.
import type { Keyring } from '@agentyard/crypto';
import type { SystemDb } from '@agentyard/db/system';
import { INVITE_SEAL_CONTEXT } from './invites.ts';

type Status = 'active' | 'used' | 'expired';

export async function listAllInvites(db: SystemDb, keyring: Keyring) {
  const rows = await db.selectFrom('invites').select(['token_sealed', 'email', 'created_at', 'used_at', 'used_by', 'expires_at']).orderBy('created_at', 'desc').execute();
  const now = Date.now();
  const invites = rows.map((row) => {
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
  return { invites, total: invites.length, active: invites.filter((invite) => invite.status === 'active').length };
}
