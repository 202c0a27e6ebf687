import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { get, post, put } from '../api.ts';
import { configText, parseConfigText } from '../config-text.ts';
import { when } from '../format.ts';
import type { Config, ConfigRestore, ConfigSave } from '../types.ts';
import { Button, Confirm, ErrorNote, Loading, Notice } from '../ui.tsx';

/** The user's defaults for new agents (OpenClaw's keys) with the last 10 backups: edit, check in place, save, restore. */
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
      <p className="muted">
        Your defaults for new agents: each agent you create from now on starts with this configuration (its plan's tools profile aside). It changes no agent you already have: each agent's own
        configuration is on its Configuration page. Saving backs up the previous defaults; the last 10 can be restored.
      </p>
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
