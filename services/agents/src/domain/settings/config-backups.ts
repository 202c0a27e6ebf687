import { randomBytes } from 'node:crypto';
import { sql, type UserTx } from '@agentyard/db';
import { defaultAgentConfig, validateAgentConfig, type AgentConfig } from '../agents/config-document.ts';
import { WorkspaceErrors } from '../../errors.ts';
import { checkSkillLimit, planOf, type PlanCaller } from '../agents/plan-limits.ts';

/** How many backups a user keeps. */
export const BACKUPS_KEPT = 10;

export interface BackupSummary {
  id: string;
  timestamp: string;
}

const newBackupId = () => `bkp_${randomBytes(12).toString('base64url')}`;

// Saves and restores of one user run one at a time, so two concurrent saves never lose a backup
// or keep an eleventh; the lock is released when the transaction ends.
async function lockConfigOf(trx: UserTx, userId: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtext('agent-config'), hashtext(${userId}))`.execute(trx);
}

/** The defaults of the caller's plan now (no plan: the smallest plan's). */
async function planDefaults(trx: UserTx, caller: PlanCaller): Promise<AgentConfig> {
  const user = await trx.selectFrom('users').select('id').where('id', '=', caller.userId).executeTakeFirst();
  if (!user) throw WorkspaceErrors.userNotFound();
  return defaultAgentConfig((await planOf(trx, caller)) ?? 'free');
}

async function currentConfig(trx: UserTx, caller: PlanCaller): Promise<AgentConfig> {
  const saved = await trx
    .selectFrom('agent_configs')
    .select('config')
    .where('user_id', '=', caller.userId)
    .executeTakeFirst();
  return saved?.config ?? planDefaults(trx, caller);
}

export async function listBackups(trx: UserTx, userId: string): Promise<BackupSummary[]> {
  const rows = await trx
    .selectFrom('config_backups')
    .select(['id', 'created_at'])
    .where('user_id', '=', userId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(BACKUPS_KEPT)
    .execute();
  return rows.map((row) => ({ id: row.id, timestamp: row.created_at.toISOString() }));
}

/** The saved configuration, or the defaults of the user's plan when none is saved. */
export async function readConfig(trx: UserTx, caller: PlanCaller) {
  return { config: await currentConfig(trx, caller), backups: await listBackups(trx, caller.userId) };
}

async function backUpAndReplace(trx: UserTx, caller: PlanCaller, next: AgentConfig): Promise<string> {
  const { userId } = caller;
  const backupId = newBackupId();
  await trx
    .insertInto('config_backups')
    .values({ id: backupId, user_id: userId, config: await currentConfig(trx, caller) })
    .execute();
  await trx
    .insertInto('agent_configs')
    .values({ user_id: userId, config: next })
    .onConflict((oc) => oc.column('user_id').doUpdateSet({ config: next, updated_at: sql`now()` }))
    .execute();
  await trx
    .deleteFrom('config_backups')
    .where('user_id', '=', userId)
    .where('id', 'not in', (qb) =>
      qb
        .selectFrom('config_backups')
        .select('id')
        .where('user_id', '=', userId)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(BACKUPS_KEPT),
    )
    .execute();
  return backupId;
}

/** Backs up the current configuration, then saves `config` (refused when OpenClaw would reject it or it has more skills than the plan). */
export async function saveConfig(trx: UserTx, caller: PlanCaller, config: AgentConfig) {
  const { userId } = caller;
  const check = validateAgentConfig(config);
  if (!check.ok) throw WorkspaceErrors.configRejected(check.message);
  await checkSkillLimit(trx, caller, config);
  await lockConfigOf(trx, userId);
  const backupId = await backUpAndReplace(trx, caller, config);
  return { config, backupId, backups: await listBackups(trx, userId) };
}

/** Backs up the current configuration, then makes backup `backupId` the configuration (within the plan's skill limit). */
export async function restoreBackup(trx: UserTx, caller: PlanCaller, backupId: string) {
  const { userId } = caller;
  await lockConfigOf(trx, userId);
  const backup = await trx
    .selectFrom('config_backups')
    .select('config')
    .where('user_id', '=', userId)
    .where('id', '=', backupId)
    .executeTakeFirst();
  if (!backup) throw WorkspaceErrors.backupNotFound();
  await checkSkillLimit(trx, caller, backup.config);
  await backUpAndReplace(trx, caller, backup.config);
  return { config: backup.config, restoredFrom: backupId, backups: await listBackups(trx, userId) };
}
