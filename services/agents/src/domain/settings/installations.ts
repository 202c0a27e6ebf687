import type { Keyring } from '@agentyard/crypto';
import type { Database, Transaction } from '@agentyard/db';
import { FleetErrors } from '../../errors.ts';

export interface NewInstallation {
  kind: 'home' | 'link';
  mode: 'local' | 'remote';
  name?: string;
  gatewayUrl?: string;
  gatewayToken?: string;
  version?: string;
}

// The installation id is bound into the ciphertext: a sealed token moved to another row does not open.
const tokenContext = (installationId: string) => `installation:${installationId}:gateway-token`;

type InstallationRow = Awaited<ReturnType<typeof selectInstallations>>[number];
const selectInstallations = (trx: Transaction<Database>) =>
  trx
    .selectFrom('installations')
    .select([
      'id',
      'kind',
      'mode',
      'name',
      'gateway_url',
      'gateway_token_sealed',
      'version',
      'last_seen_at',
      'created_at',
    ])
    .orderBy('created_at', 'desc')
    .orderBy('id')
    .execute();

/** An installation as its owner sees it: never its token, only whether one is kept. */
export function installationView(row: InstallationRow, offlineAfterMs: number, now = Date.now()) {
  const status =
    row.last_seen_at === null
      ? 'never-seen'
      : now - row.last_seen_at.getTime() <= offlineAfterMs
        ? 'online'
        : 'offline';
  return {
    id: row.id,
    kind: row.kind,
    mode: row.mode,
    name: row.name,
    gatewayUrl: row.gateway_url,
    hasGatewayToken: row.gateway_token_sealed !== null,
    version: row.version,
    status: status as 'online' | 'offline' | 'never-seen',
    lastSeenAt: row.last_seen_at?.toISOString() ?? null,
    createdAt: row.created_at.toISOString(),
  };
}

/** Links an installation to the user whose transaction this is; its token sealed with the keyring. Registering is its first sign of life. */
export async function registerInstallation(
  trx: Transaction<Database>,
  userId: string,
  keyring: Keyring,
  input: NewInstallation,
): Promise<string> {
  if (input.mode === 'remote' && !input.gatewayUrl) throw FleetErrors.gatewayUrlRequired();
  const row = await trx
    .insertInto('installations')
    .values({
      user_id: userId,
      kind: input.kind,
      mode: input.mode,
      name: input.name ?? null,
      gateway_url: input.gatewayUrl ?? null,
      version: input.version ?? null,
      last_seen_at: new Date(),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  if (input.gatewayToken !== undefined)
    await trx
      .updateTable('installations')
      .set({ gateway_token_sealed: keyring.encrypt(input.gatewayToken, tokenContext(row.id)) })
      .where('id', '=', row.id)
      .execute();
  return row.id;
}

export const listInstallations = selectInstallations;

/** The installation is alive now (and runs `version`, when it says). */
export async function recordHeartbeat(
  trx: Transaction<Database>,
  id: string,
  version: string | undefined,
): Promise<InstallationRow> {
  const row = await trx
    .updateTable('installations')
    .set({ last_seen_at: new Date(), ...(version !== undefined ? { version } : {}) })
    .where('id', '=', id)
    .returning([
      'id',
      'kind',
      'mode',
      'name',
      'gateway_url',
      'gateway_token_sealed',
      'version',
      'last_seen_at',
      'created_at',
    ])
    .executeTakeFirst();
  if (!row) throw FleetErrors.installationNotFound();
  return row;
}

export async function deleteInstallation(trx: Transaction<Database>, id: string): Promise<void> {
  const deleted = await trx.deleteFrom('installations').where('id', '=', id).executeTakeFirst();
  if (deleted.numDeletedRows === 0n) throw FleetErrors.installationNotFound();
}
