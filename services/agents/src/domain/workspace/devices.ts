import type { Selectable, UserTx, DevicesTable, DeviceStatus } from '@agentyard/db';
import { WorkspaceErrors } from '../../errors.ts';

export type DeviceAction = 'approve' | 'deny' | 'revoke';

/** Spec §3: approve and deny move a pending device, revoke an approved one; nothing else moves. */
const TRANSITIONS: Record<DeviceAction, { from: DeviceStatus; to: DeviceStatus; refused: () => Error }> = {
  approve: { from: 'pending', to: 'approved', refused: WorkspaceErrors.deviceNotPending },
  deny: { from: 'pending', to: 'denied', refused: WorkspaceErrors.deviceNotPending },
  revoke: { from: 'approved', to: 'revoked', refused: WorkspaceErrors.deviceNotApproved },
};

const toDevice = (row: Selectable<DevicesTable>) => ({
  id: row.id, name: row.name, ip: row.ip, firstSeen: row.first_seen.toISOString(), lastSeen: row.last_seen.toISOString(), status: row.status,
});

export async function listDevices(trx: UserTx) {
  const rows = await trx.selectFrom('devices').selectAll().where('status', 'in', ['pending', 'approved'])
    .orderBy('last_seen', 'desc').orderBy('id').execute();
  return {
    pending: rows.filter((row) => row.status === 'pending').map(toDevice),
    approved: rows.filter((row) => row.status === 'approved').map(toDevice),
  };
}

/** Applies `action` to the caller's device in one conditional update, so two callers cannot both move it. */
export async function actOnDevice(trx: UserTx, deviceId: string, action: DeviceAction) {
  const transition = TRANSITIONS[action];
  const moved = await trx.updateTable('devices').set({ status: transition.to })
    .where('id', '=', deviceId).where('status', '=', transition.from).returning('id').executeTakeFirst();
  if (!moved) {
    const exists = await trx.selectFrom('devices').select('id').where('id', '=', deviceId).executeTakeFirst();
    throw exists ? transition.refused() : WorkspaceErrors.deviceNotFound();
  }
  return listDevices(trx);
}
