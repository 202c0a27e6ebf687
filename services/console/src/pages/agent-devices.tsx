import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { get, post } from '../api.ts';
import { when } from '../format.ts';
import type { DeviceChoice, Devices, DevicesAfter, PairedDevice } from '../types.ts';
import { Button, Confirm, ErrorNote, Loading, Notice } from '../ui.tsx';
import { useAgent } from './agents.tsx';

/** The devices (OpenClaw apps and clients) that asked to pair with this agent's gateway, and those it trusts. */
export function DevicesPage() {
  const agent = useAgent();
  const queries = useQueryClient();
  // GET /api/devices lists every agent's devices; a device id starts with its agent's id.
  const devices = useQuery({ queryKey: ['devices'], queryFn: () => get<Devices>('/api/devices') });
  const ofAgent = (list: PairedDevice[]) => list.filter((d) => d.id.startsWith(`${agent.id}:`));
  const [revoking, setRevoking] = useState<string | undefined>();
  const act = useMutation({
    mutationFn: ({ device, action }: { device: PairedDevice; action: DeviceChoice }) =>
      post<DevicesAfter>('/api/devices', { deviceId: device.id, action }),
    onSuccess: ({ pending, approved }) => {
      setRevoking(undefined);
      queries.setQueryData(['devices'], { pending, approved });
    },
  });
  const busy = (device: PairedDevice, action: DeviceChoice) =>
    act.isPending && act.variables?.device.id === device.id && act.variables.action === action;
  const done = act.isSuccess
    ? `${act.variables.device.name}: ${act.variables.action === 'approve' ? 'approved' : act.variables.action === 'deny' ? 'rejected' : 'revoked'}.`
    : undefined;
  if (devices.isPending) return <Loading what="devices" />;
  if (devices.isError)
    return (
      <section className="card">
        <h2>Devices</h2>
        <ErrorNote error={devices.error} />
      </section>
    );
  const pending = ofAgent(devices.data.pending);
  const approved = ofAgent(devices.data.approved);
  return (
    <>
      <ErrorNote error={act.error} />
      {done && <Notice>{done}</Notice>}
      <section className="card" aria-labelledby="pending-devices">
        <h2 id="pending-devices">Waiting for approval</h2>
        {pending.length === 0 ? (
          <p className="muted">
            No device is asking to pair. An OpenClaw app that connects with this agent's gateway token shows up here.
          </p>
        ) : (
          <DeviceTable
            devices={pending}
            actions={(device) => (
              <div className="row">
                <Button
                  aria-label={`Approve ${device.name}`}
                  busy={busy(device, 'approve')}
                  busyLabel="Approving…"
                  disabled={act.isPending}
                  onClick={() => act.mutate({ device, action: 'approve' })}
                >
                  Approve
                </Button>
                <Button
                  className="button danger"
                  aria-label={`Reject ${device.name}`}
                  busy={busy(device, 'deny')}
                  busyLabel="Rejecting…"
                  disabled={act.isPending}
                  onClick={() => act.mutate({ device, action: 'deny' })}
                >
                  Reject
                </Button>
              </div>
            )}
          />
        )}
      </section>
      <section className="card" aria-labelledby="paired-devices">
        <h2 id="paired-devices">Paired devices</h2>
        {approved.length === 0 ? (
          <p className="muted">No device is paired with this agent.</p>
        ) : (
          <DeviceTable
            devices={approved}
            actions={(device) => (
              <>
                <Button
                  className="button danger"
                  aria-label={`Revoke ${device.name}`}
                  onClick={() => setRevoking(device.id)}
                >
                  Revoke
                </Button>
                {revoking === device.id && (
                  <Confirm
                    question={`Revoke ${device.name}? It can no longer reach the agent until it pairs again.`}
                    confirmLabel="Revoke device"
                    busy={busy(device, 'revoke')}
                    onConfirm={() => act.mutate({ device, action: 'revoke' })}
                    onCancel={() => setRevoking(undefined)}
                  />
                )}
              </>
            )}
          />
        )}
      </section>
    </>
  );
}

function DeviceTable({
  devices,
  actions,
}: {
  devices: PairedDevice[];
  actions: (device: PairedDevice) => React.ReactNode;
}) {
  return (
    <div className="table-wrap">
      <table>
        <thead>
          <tr>
            <th scope="col">Device</th>
            <th scope="col">Address</th>
            <th scope="col">First seen</th>
            <th scope="col">Last seen</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {devices.map((device) => (
            <tr key={device.id}>
              <td>{device.name}</td>
              <td>{device.ip ?? '—'}</td>
              <td>{when(device.firstSeen)}</td>
              <td>{when(device.lastSeen)}</td>
              <td>{actions(device)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
