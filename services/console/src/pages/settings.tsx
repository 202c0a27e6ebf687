import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { get, patch, post, put } from '../api.ts';
import { configText, parseConfigText } from '../config-text.ts';
import { when } from '../format.ts';
import { SESSION_KEY } from '../session.ts';
import type { Config, ConfigRestore, ConfigSave, CreatedInvite, Invites, ProfileView } from '../types.ts';
import { Button, Confirm, CopyButton, Empty, ErrorNote, Field, Loading, Notice } from '../ui.tsx';

export function SettingsPage() {
  const profile = useQuery({ queryKey: ['profile'], queryFn: () => get<ProfileView>('/api/settings') });
  return (
    <>
      <h1>Settings</h1>
      {profile.isPending ? <Loading what="your profile" /> : profile.isError ? <ErrorNote error={profile.error} /> : <ProfileForm profile={profile.data} />}
      <PasswordForm />
    </>
  );
}

function ProfileForm({ profile }: { profile: ProfileView }) {
  const queries = useQueryClient();
  const [name, setName] = useState(profile.name);
  const save = useMutation({
    mutationFn: () => patch('/api/settings', { name }),
    onSuccess: () => Promise.all([queries.invalidateQueries({ queryKey: ['profile'] }), queries.invalidateQueries({ queryKey: SESSION_KEY })]),
  });
  const resend = useMutation({ mutationFn: () => post<{ message: string }>('/api/auth/resend-verification') });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    save.mutate();
  };
  return (
    <section className="card" aria-labelledby="profile">
      <h2 id="profile">Profile</h2>
      <p>
        {profile.email} · {profile.emailVerified ? 'verified' : 'not verified'} · plan {profile.plan} · member since {when(profile.createdAt)}
      </p>
      {!profile.emailVerified && (
        <div className="row">
          <Button className="button secondary" busy={resend.isPending} busyLabel="Sending…" onClick={() => resend.mutate()}>
            Send the verification mail again
          </Button>
          {resend.isSuccess && <Notice>{resend.data.message}</Notice>}
          <ErrorNote error={resend.error} />
        </div>
      )}
      <form onSubmit={submit} className="stack">
        <Field label="Display name" required maxLength={200} value={name} onChange={(e) => setName(e.target.value)} />
        <ErrorNote error={save.error} />
        {save.isSuccess && <Notice>Saved.</Notice>}
        <Button type="submit" busy={save.isPending} busyLabel="Saving…">
          Save profile
        </Button>
      </form>
    </section>
  );
}

function PasswordForm() {
  const [currentPassword, setCurrent] = useState('');
  const [newPassword, setNew] = useState('');
  const change = useMutation({
    mutationFn: () => post('/api/settings/password', { currentPassword, newPassword }),
    onSuccess: () => {
      setCurrent('');
      setNew('');
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    change.mutate();
  };
  return (
    <section className="card" aria-labelledby="password">
      <h2 id="password">Password</h2>
      <form onSubmit={submit} className="stack">
        <Field label="Current password" type="password" autoComplete="current-password" required value={currentPassword} onChange={(e) => setCurrent(e.target.value)} />
        <Field label="New password" type="password" autoComplete="new-password" required value={newPassword} onChange={(e) => setNew(e.target.value)} />
        <ErrorNote error={change.error} />
        {change.isSuccess && <Notice>Your password is changed.</Notice>}
        <Button type="submit" busy={change.isPending} busyLabel="Changing…">
          Change password
        </Button>
      </form>
    </section>
  );
}

/** The agent configuration (OpenClaw's keys) with its last 10 backups: edit, check in place, save, restore. */
export function ConfigPage() {
  const queries = useQueryClient();
  const config = useQuery({ queryKey: ['config'], queryFn: () => get<Config>('/api/config') });
  const [text, setText] = useState<string | undefined>();
  const [restoring, setRestoring] = useState<string | undefined>();
  const shown = text ?? (config.data ? configText(config.data.config) : '');
  const parsed = text === undefined ? undefined : parseConfigText(text);
  const save = useMutation({
    mutationFn: (value: Record<string, unknown>) => post<ConfigSave>('/api/config', { config: value }),
    onSuccess: (saved) => {
      queries.setQueryData(['config'], { config: saved.config, backups: saved.backups });
      setText(undefined);
    },
  });
  const restore = useMutation({
    mutationFn: (backupId: string) => put<ConfigRestore>('/api/config', { backupId }),
    onSuccess: (restored) => {
      queries.setQueryData(['config'], { config: restored.config, backups: restored.backups });
      setText(undefined);
      setRestoring(undefined);
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (parsed?.ok) save.mutate(parsed.value);
  };
  const invalid = parsed && !parsed.ok ? parsed.message : save.error?.message;
  return (
    <>
      <h1>Configuration</h1>
      <p className="muted">Your agents' OpenClaw configuration. Saving backs up the previous one; the last 10 backups can be restored. Agents are rebuilt from it, keeping their memory.</p>
      {config.isPending ? (
        <Loading what="the configuration" />
      ) : config.isError ? (
        <ErrorNote error={config.error} />
      ) : (
        <>
          <form onSubmit={submit} className="card stack">
            <div className="field">
              <label htmlFor="config-text">Configuration (JSON)</label>
              <textarea
                id="config-text"
                rows={18}
                spellCheck={false}
                value={shown}
                onChange={(e) => setText(e.target.value)}
                aria-invalid={invalid ? true : undefined}
                aria-describedby="config-problem"
              />
              <p id="config-problem" className={invalid ? 'field-error' : 'hint'} role={invalid ? 'alert' : undefined}>
                {invalid ?? "Checked as you type; the server checks it against OpenClaw's rules when you save."}
              </p>
            </div>
            {save.isSuccess && <Notice>Saved; the previous configuration is backed up.</Notice>}
            <div className="row">
              <Button type="submit" busy={save.isPending} busyLabel="Saving…" disabled={text === undefined || !parsed?.ok}>
                Save configuration
              </Button>
              {text !== undefined && (
                <Button
                  className="button secondary"
                  onClick={() => {
                    setText(undefined);
                    save.reset();
                  }}
                >
                  Discard changes
                </Button>
              )}
            </div>
          </form>
          <section className="card" aria-labelledby="backups">
            <h2 id="backups">Backups</h2>
            {config.data.backups.length === 0 ? (
              <p className="muted">No backups yet: each save keeps the previous configuration here.</p>
            ) : (
              <ul className="stack plain">
                {config.data.backups.map((backup) => (
                  <li key={backup.id} className="row">
                    <span>{when(backup.timestamp)}</span>
                    {restoring === backup.id ? (
                      <Confirm
                        question={`Restore the configuration of ${when(backup.timestamp)}? The current one is backed up first.`}
                        confirmLabel="Restore"
                        busy={restore.isPending}
                        onConfirm={() => restore.mutate(backup.id)}
                        onCancel={() => setRestoring(undefined)}
                      />
                    ) : (
                      <Button className="button secondary" aria-label={`Restore the backup of ${when(backup.timestamp)}`} onClick={() => setRestoring(backup.id)}>
                        Restore
                      </Button>
                    )}
                  </li>
                ))}
              </ul>
            )}
            <ErrorNote error={restore.error} />
            {restore.isSuccess && <Notice>Restored.</Notice>}
          </section>
        </>
      )}
    </>
  );
}

export function AdminInvitesPage() {
  const queries = useQueryClient();
  const invites = useQuery({ queryKey: ['admin-invites'], queryFn: () => get<Invites>('/api/admin/invites?limit=100') });
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
