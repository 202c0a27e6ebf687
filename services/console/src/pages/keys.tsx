import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Link } from 'react-router';
import { del, get, post } from '../api.ts';
import { when } from '../format.ts';
import type { CreatedKey, Keys } from '../types.ts';
import { Button, Confirm, CopyButton, Empty, ErrorNote, Field, Loading } from '../ui.tsx';

/** A key's own AI limits, as set under Budgets (none: only the plan's). */
const paceOf = (key: Keys['keys'][number]) =>
  [
    key.requestsPerMinute !== null && `${key.requestsPerMinute} requests`,
    key.tokensPerMinute !== null && `${key.tokensPerMinute} tokens`,
  ]
    .filter(Boolean)
    .join(', ') || 'None';

export function KeysPage() {
  const queries = useQueryClient();
  const keys = useQuery({ queryKey: ['keys'], queryFn: () => get<Keys>('/api/keys?limit=100') });
  const [name, setName] = useState('');
  const [created, setCreated] = useState<CreatedKey | undefined>();
  const [deleting, setDeleting] = useState<string | undefined>();
  const create = useMutation({
    mutationFn: () => post<CreatedKey>('/api/keys', name ? { name } : {}),
    onSuccess: (key) => {
      setCreated(key);
      setName('');
      return queries.invalidateQueries({ queryKey: ['keys'] });
    },
  });
  const remove = useMutation({
    mutationFn: (id: string) => del(`/api/keys/${id}`),
    onSuccess: () => {
      setDeleting(undefined);
      return queries.invalidateQueries({ queryKey: ['keys'] });
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate();
  };
  return (
    <>
      <h1>API keys</h1>
      <p>
        A key acts as you on the API: send it as <code>Authorization: Bearer sk_…</code>. See the{' '}
        <a href="/api/docs">API docs</a>.
      </p>
      <form onSubmit={submit} className="card row">
        <Field
          label="Key name"
          maxLength={100}
          value={name}
          onChange={(e) => setName(e.target.value)}
          hint="Something to recognise it by."
        />
        <Button type="submit" busy={create.isPending} busyLabel="Creating…">
          Create key
        </Button>
      </form>
      <ErrorNote error={create.error} />
      {created && (
        <section className="card notice" aria-labelledby="new-key">
          <h2 id="new-key">Your new key “{created.name}”</h2>
          <p>Copy it now: it is shown this once and cannot be shown again.</p>
          <div className="row">
            <code className="secret">{created.key}</code>
            <CopyButton value={created.key} label="Copy the new API key" />
          </div>
          <Button className="button secondary" onClick={() => setCreated(undefined)}>
            I have copied it
          </Button>
        </section>
      )}
      {keys.isPending ? (
        <Loading what="your keys" />
      ) : keys.isError ? (
        <ErrorNote error={keys.error} />
      ) : keys.data.keys.length === 0 ? (
        <Empty title="No API keys">
          <p>Create a key to call the API from your own programs.</p>
        </Empty>
      ) : (
        <div className="table-wrap card">
          <table>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Starts with</th>
                <th scope="col">Created</th>
                <th scope="col">AI limits per minute</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {keys.data.keys.map((key) => (
                <tr key={key.id}>
                  <td>{key.name}</td>
                  <td>
                    <code>{key.prefix}…</code>
                  </td>
                  <td>{when(key.createdAt)}</td>
                  <td>
                    {paceOf(key)}{' '}
                    <Link to="/billing" aria-label={`Change the AI limits of the key ${key.name}`}>
                      Change
                    </Link>
                  </td>
                  <td>
                    {deleting === key.id ? (
                      <Confirm
                        question={`Delete the key “${key.name}”? Programs using it stop working at once.`}
                        confirmLabel="Delete key"
                        busy={remove.isPending}
                        onConfirm={() => remove.mutate(key.id)}
                        onCancel={() => setDeleting(undefined)}
                      />
                    ) : (
                      <Button
                        className="button danger"
                        aria-label={`Delete the key ${key.name}`}
                        onClick={() => setDeleting(key.id)}
                      >
                        Delete
                      </Button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <ErrorNote error={remove.error} />
    </>
  );
}
