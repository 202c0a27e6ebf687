import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { get, patch, post } from '../api.ts';
import { when } from '../format.ts';
import { SESSION_KEY } from '../session.ts';
import type { ProfileView } from '../types.ts';
import { Button, ErrorNote, Field, Loading, Notice } from '../ui.tsx';

export function SettingsPage() {
  const profile = useQuery({ queryKey: ['profile'], queryFn: () => get<ProfileView>('/api/settings') });
  return (
    <>
      <h1>Settings</h1>
      {profile.isPending ? (
        <Loading what="your profile" />
      ) : profile.isError ? (
        <ErrorNote error={profile.error} />
      ) : (
        <ProfileForm profile={profile.data} />
      )}
      <PasswordForm />
    </>
  );
}

function ProfileForm({ profile }: { profile: ProfileView }) {
  const queries = useQueryClient();
  const [name, setName] = useState(profile.name);
  const save = useMutation({
    mutationFn: () => patch('/api/settings', { name }),
    onSuccess: () =>
      Promise.all([
        queries.invalidateQueries({ queryKey: ['profile'] }),
        queries.invalidateQueries({ queryKey: SESSION_KEY }),
      ]),
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
        {profile.email} · {profile.emailVerified ? 'verified' : 'not verified'} · plan {profile.plan} · member since{' '}
        {when(profile.createdAt)}
      </p>
      {!profile.emailVerified && (
        <div className="row">
          <Button
            className="button secondary"
            busy={resend.isPending}
            busyLabel="Sending…"
            onClick={() => resend.mutate()}
          >
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
        <Field
          label="Current password"
          type="password"
          autoComplete="current-password"
          required
          value={currentPassword}
          onChange={(e) => setCurrent(e.target.value)}
        />
        <Field
          label="New password"
          type="password"
          autoComplete="new-password"
          required
          value={newPassword}
          onChange={(e) => setNew(e.target.value)}
        />
        <ErrorNote error={change.error} />
        {change.isSuccess && <Notice>Your password is changed.</Notice>}
        <Button type="submit" busy={change.isPending} busyLabel="Changing…">
          Change password
        </Button>
      </form>
    </section>
  );
}
