import type { AgentControlClient, PairedDevice, PairingRequest } from '@agentyard/agent-gateway';
import type { Keyring } from '@agentyard/crypto';
import type { DeviceStatus, UserTx } from '@agentyard/db';
import { onAgentControlPlane, runningAgentGateway, type AgentGateway } from '../gateway/agent-gateway-access.ts';
import { controlUiDeviceId } from '../gateway/control-ui.ts';
import type { AgentRow } from '../agents/agent-views.ts';
import { AgentErrors, WorkspaceErrors } from '../../errors.ts';

/**
 * A user's paired devices are the pairing state of their running agents' gateways
 * (`device.pair.list/approve/reject/remove`), the gateway being the truth; the platform's own
 * devices (its control device, the Control UI proxy's) are left out. A device is `<agentId>:<gateway device id>`. The `devices` table only
 * records the decisions taken here (the gateway forgets a rejected request or a removed device), so
 * acting again on a denied or revoked device is refused with a 400 rather than not found.
 */

export type DeviceAction = 'approve' | 'deny' | 'revoke';
export interface Device {
  id: string;
  name: string;
  ip: string | null;
  firstSeen: string;
  lastSeen: string;
  status: DeviceStatus;
}
export interface DeviceLists {
  pending: Device[];
  approved: Device[];
}

/** Approve and deny move a pending device, revoke an approved one; nothing else moves. */
const TRANSITIONS: Record<DeviceAction, { from: DeviceStatus; to: DeviceStatus; refused: () => Error }> = {
  approve: { from: 'pending', to: 'approved', refused: WorkspaceErrors.deviceNotPending },
  deny: { from: 'pending', to: 'denied', refused: WorkspaceErrors.deviceNotPending },
  revoke: { from: 'approved', to: 'revoked', refused: WorkspaceErrors.deviceNotApproved },
};

export interface DeviceAccess {
  keyring: Keyring;
  timeoutMs: number;
  warn: (message: string, agentId: string) => void;
}

const iso = (...ms: (number | undefined)[]) => {
  const found = ms.find((v) => typeof v === 'number' && Number.isFinite(v));
  return found === undefined ? null : new Date(found).toISOString();
};
const deviceName = (d: { displayName?: string; clientId?: string; platform?: string; deviceId: string }) =>
  d.displayName || d.clientId || d.platform || d.deviceId.slice(0, 12);

function pendingDevice(agentId: string, r: PairingRequest): Device | null {
  const seen = iso(r.ts);
  return seen
    ? {
        id: `${agentId}:${r.deviceId}`,
        name: deviceName(r),
        ip: r.remoteIp ?? null,
        firstSeen: seen,
        lastSeen: seen,
        status: 'pending',
      }
    : null;
}
function approvedDevice(agentId: string, d: PairedDevice & { lastSeenAtMs?: number }): Device | null {
  const first = iso(d.createdAtMs, d.approvedAtMs);
  const last = iso(d.lastSeenAtMs, d.approvedAtMs, d.createdAtMs);
  return first && last
    ? {
        id: `${agentId}:${d.deviceId}`,
        name: deviceName(d),
        ip: d.remoteIp ?? null,
        firstSeen: first,
        lastSeen: last,
        status: 'approved',
      }
    : null;
}

interface GatewayPairing {
  pending: PairingRequest[];
  paired: PairedDevice[];
}
/** The platform's own devices on an agent's gateway: its control device and the Control UI proxy's. */
const platformDevicesOf = (client: AgentControlClient, gateway: AgentGateway) =>
  new Set([client.deviceId, controlUiDeviceId(gateway)]);

/** The gateway's pairing state without the platform's own devices. */
async function pairingOf(
  client: AgentControlClient,
  gateway: AgentGateway,
  timeoutMs: number,
): Promise<GatewayPairing> {
  const listed = await client.call('device.pair.list', {}, timeoutMs);
  const platform = platformDevicesOf(client, gateway);
  const others = <T extends { deviceId: string }>(list: T[] | undefined) =>
    (Array.isArray(list) ? list : []).filter((d) => !platform.has(d.deviceId));
  return { pending: others(listed.pending), paired: others(listed.paired) };
}

/** The running agents whose devices to list: every one, or the one named (someone else's, or none: 404; not running: none). */
async function runningAgents(trx: UserTx, agentId?: string): Promise<AgentRow[]> {
  if (agentId !== undefined) {
    const agent = (await trx.selectFrom('agents').selectAll().where('id', '=', agentId).executeTakeFirst()) as
      | AgentRow
      | undefined;
    if (!agent) throw AgentErrors.notFound();
    return agent.status === 'running' ? [agent] : [];
  }
  return trx
    .selectFrom('agents')
    .selectAll()
    .where('status', '=', 'running')
    .orderBy('created_at')
    .execute() as Promise<AgentRow[]>;
}

/** Every running agent's devices (or `agentId`'s only), newest seen first; an agent whose gateway does not answer is left out (and logged). */
export async function listDevices(
  db: { asUser: <T>(work: (trx: UserTx) => Promise<T>) => Promise<T> },
  access: DeviceAccess,
  agentId?: string,
): Promise<DeviceLists> {
  const agents = await db.asUser((trx) => runningAgents(trx, agentId));
  const lists: DeviceLists = { pending: [], approved: [] };
  // A few gateways at a time: a user with many agents must not open a connection to each at once.
  for (let i = 0; i < agents.length; i += 4) {
    await Promise.all(
      agents.slice(i, i + 4).map(async (agent) => {
        let pairing: GatewayPairing;
        try {
          const gateway = runningAgentGateway(agent, access.keyring);
          pairing = await onAgentControlPlane(gateway, access.timeoutMs, (client) =>
            pairingOf(client, gateway, access.timeoutMs),
          );
        } catch {
          access.warn('agent gateway did not give its pairing state', agent.id);
          return;
        }
        lists.pending.push(...pairing.pending.map((r) => pendingDevice(agent.id, r)).filter((d) => d !== null));
        lists.approved.push(...pairing.paired.map((d) => approvedDevice(agent.id, d)).filter((d) => d !== null));
      }),
    );
  }
  const newestFirst = (a: Device, b: Device) => b.lastSeen.localeCompare(a.lastSeen) || a.id.localeCompare(b.id);
  return { pending: lists.pending.sort(newestFirst), approved: lists.approved.sort(newestFirst) };
}

const AGENT_DEVICE = /^([0-9a-f-]{36}):([A-Za-z0-9_-]{1,90})$/;

/**
 * Applies `action` on the agent's gateway (approve/reject the device's pending request, remove a
 * paired device), records the decision, and answers the new lists. A device the gateway does not
 * know in the state the action needs is refused by the state the decision record holds, else 404.
 */
export async function actOnDevice(
  db: { asUser: <T>(work: (trx: UserTx) => Promise<T>) => Promise<T> },
  userId: string,
  deviceId: string,
  action: DeviceAction,
  access: DeviceAccess,
): Promise<DeviceLists> {
  const transition = TRANSITIONS[action];
  const { agent, recorded } = await db.asUser(async (trx) => {
    const match = AGENT_DEVICE.exec(deviceId);
    return {
      agent: match ? (await runningAgents(trx)).find((a) => a.id === match[1]) : undefined,
      recorded: await trx.selectFrom('devices').selectAll().where('id', '=', deviceId).executeTakeFirst(),
    };
  });
  const refuse = () =>
    recorded && recorded.status !== transition.from ? transition.refused() : WorkspaceErrors.deviceNotFound();
  if (!agent) throw refuse();
  const gatewayDeviceId = deviceId.slice(agent.id.length + 1);
  const gateway: AgentGateway = runningAgentGateway(agent, access.keyring);
  const acted = await onAgentControlPlane(gateway, access.timeoutMs, async (client) => {
    if (platformDevicesOf(client, gateway).has(gatewayDeviceId)) throw WorkspaceErrors.deviceNotFound();
    const pairing = await pairingOf(client, gateway, access.timeoutMs);
    const request = pairing.pending.find((r) => r.deviceId === gatewayDeviceId);
    const paired = pairing.paired.find((d) => d.deviceId === gatewayDeviceId);
    if (transition.from === 'pending' && !request) throw paired ? transition.refused() : refuse();
    if (transition.from === 'approved' && !paired) throw request ? transition.refused() : refuse();
    if (action === 'approve')
      await client.call('device.pair.approve', { requestId: request!.requestId }, access.timeoutMs);
    else if (action === 'deny')
      await client.call('device.pair.reject', { requestId: request!.requestId }, access.timeoutMs);
    else await client.call('device.pair.remove', { deviceId: gatewayDeviceId }, access.timeoutMs);
    const seen = request ? pendingDevice(agent.id, request) : paired ? approvedDevice(agent.id, paired) : null;
    return { name: seen?.name ?? gatewayDeviceId.slice(0, 12), ip: seen?.ip ?? null, firstSeen: seen?.firstSeen };
  });
  await db.asUser((trx) =>
    trx
      .insertInto('devices')
      .values({
        id: deviceId,
        user_id: userId,
        agent_id: agent.id,
        name: acted.name,
        ip: acted.ip,
        status: transition.to,
        ...(acted.firstSeen ? { first_seen: new Date(acted.firstSeen) } : {}),
        last_seen: new Date(),
      })
      .onConflict((c) =>
        c.column('id').doUpdateSet({ status: transition.to, name: acted.name, ip: acted.ip, last_seen: new Date() }),
      )
      .execute(),
  );
  return listDevices(db, access);
}
