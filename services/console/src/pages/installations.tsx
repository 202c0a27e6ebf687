import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';
import { del, get } from '../api.ts';
import { when } from '../format.ts';
import type { InstallationList } from '../types.ts';
import { Button, Confirm, CopyButton, Empty, ErrorNote, Loading, TableRegion } from '../ui.tsx';

const STATUS_WORDS = { online: 'Online', offline: 'Offline', 'never-seen': 'Not seen yet' } as const;

/** The OpenClaw installations the user runs themselves, linked to their account, and how to link one. */
export function InstallationsPage() {
  const queries = useQueryClient();
  const installations = useQuery({
    queryKey: ['installations'],
    queryFn: () => get<InstallationList>('/api/installations'),
    refetchInterval: 30_000,
  });
  const [deleting, setDeleting] = useState<string | undefined>();
  const remove = useMutation({
    mutationFn: (id: string) => del(`/api/installations/${id}`),
    onSuccess: () => {
      setDeleting(undefined);
      return queries.invalidateQueries({ queryKey: ['installations'] });
    },
  });
  const origin = window.location.origin;
  const install = `curl -fsSL ${origin}/install | AGENTYARD_API_KEY=sk_… sh`;
  const link = `curl -fsSL ${origin}/link | AGENTYARD_API_KEY=sk_… OPENCLAW_GATEWAY_URL=https://… OPENCLAW_GATEWAY_TOKEN=… sh`;
  return (
    <>
      <h1>Installations</h1>
      <section className="card" aria-labelledby="link-one">
        <h2 id="link-one">Link an OpenClaw you run yourself</h2>
        <p>
          Make a key on the <Link to="/keys">API keys</Link> page, then run on that machine:
        </p>
        <div className="row">
          <code className="secret">{install}</code>
          <CopyButton value={install} label="Copy the install command" />
        </div>
        <p>Or link a gateway that already runs elsewhere:</p>
        <div className="row">
          <code className="secret">{link}</code>
          <CopyButton value={link} label="Copy the link command" />
        </div>
      </section>
      {installations.isPending ? (
        <Loading what="your installations" />
      ) : installations.isError ? (
        <ErrorNote error={installations.error} />
      ) : installations.data.installations.length === 0 ? (
        <Empty title="No installations linked">
          <p>Run one of the commands above and it shows here.</p>
        </Empty>
      ) : (
        <TableRegion label="Installations table" card>
          <table>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Kind</th>
                <th scope="col">Status</th>
                <th scope="col">Last seen</th>
                <th scope="col">Version</th>
                <th scope="col">Gateway</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {installations.data.installations.map((i) => (
                <tr key={i.id}>
                  <td>{i.name ?? i.id.slice(0, 8)}</td>
                  <td>{i.kind === 'home' ? 'Home' : 'Linked'}</td>
                  <td>{STATUS_WORDS[i.status]}</td>
                  <td>{i.lastSeenAt ? when(i.lastSeenAt) : '—'}</td>
                  <td>{i.version ?? '—'}</td>
                  <td>{i.gatewayUrl ?? 'on that machine only'}</td>
                  <td>
                    {deleting === i.id ? (
                      <Confirm
                        question="Unlink this installation? It stays installed on its machine."
                        confirmLabel="Unlink"
                        busy={remove.isPending}
                        onConfirm={() => remove.mutate(i.id)}
                        onCancel={() => setDeleting(undefined)}
                      />
                    ) : (
                      <Button
                        className="button danger"
                        aria-label={`Unlink ${i.name ?? i.id}`}
                        onClick={() => setDeleting(i.id)}
                      >
                        Unlink
                      </Button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableRegion>
      )}
      <ErrorNote error={remove.error} />
    </>
  );
}
