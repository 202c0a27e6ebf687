import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { get, post } from '../api.ts';
import { when } from '../format.ts';
import type { CreatedInvite, Invites } from '../types.ts';
import { Button, CopyButton, Empty, ErrorNote, Field, Loading } from '../ui.tsx';

export function AdminInvitesPage() {
  const queries = useQueryClient();
  const invites = useQuery({
    queryKey: ['admin-invites'],
    queryFn: () => get<Invites>('/api/admin/invites?limit=100'),
  });
  const [email, setEmail] = useState('');
  const create = useMutation({
    mutationFn: () => post<CreatedInvite>('/api/admin/invites', { email }),
    onSuccess: () => {
      setEmail('');
      return queries.invalidateQueries({ queryKey: ['admin-invites'] });
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate();
  };
  return (
    <>
      <h1>Invites</h1>
      <form onSubmit={submit} className="card row">
        <Field label="Invitee's email" type="email" required value={email} onChange={(e) => setEmail(e.target.value)} />
        <Button type="submit" busy={create.isPending} busyLabel="Creating…">
          Create invite
        </Button>
      </form>
      <ErrorNote error={create.error} />
      {create.isSuccess && (
        <div className="card notice">
          <p>Invite for {create.data.email}: send them this link.</p>
          <div className="row">
            <code className="secret">{create.data.inviteUrl}</code>
            <CopyButton value={create.data.inviteUrl} label="Copy the invite link" />
          </div>
        </div>
      )}
      {invites.isPending ? (
        <Loading what="invites" />
      ) : invites.isError ? (
        <ErrorNote error={invites.error} />
      ) : invites.data.invites.length === 0 ? (
        <Empty title="No invites yet">
          <p>Create one above for someone you want on this server.</p>
        </Empty>
      ) : (
        <div className="table-wrap card">
          <p>
            {invites.data.active} active of {invites.data.total}
          </p>
          <table>
            <thead>
              <tr>
                <th scope="col">Code</th>
                <th scope="col">Email</th>
                <th scope="col">Status</th>
                <th scope="col">Created</th>
                <th scope="col">Used</th>
              </tr>
            </thead>
            <tbody>
              {invites.data.invites.map((i) => (
                <tr key={i.code}>
                  <td>
                    <code>{i.code.slice(0, 12)}…</code>
                  </td>
                  <td>{i.email ?? '—'}</td>
                  <td>{i.status}</td>
                  <td>{when(i.createdAt)}</td>
                  <td>{when(i.usedAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}
