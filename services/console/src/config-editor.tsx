import type { FormEvent, ReactNode } from 'react';
import { configText, parseConfigText } from './config-text.ts';
import { when } from './format.ts';
import { Button, Confirm, ErrorNote } from './ui.tsx';

/** What the editors need of a mutation (TanStack Query's result fits): start it, its progress, its error. */
interface Action<T> {
  mutate: (value: T) => void;
  isPending: boolean;
  error: Error | null;
  reset: () => void;
}

/**
 * A configuration document (OpenClaw's keys) as JSON: checked as it is typed, the server's refusal
 * shown where it was typed (`#<id>-problem`). `draft` is what the person typed, undefined while they
 * have changed nothing; the page holds it, because its other saves and restores discard it too.
 */
export function ConfigDocumentForm({
  id,
  title,
  config,
  draft,
  onDraft,
  save,
  rows,
  hint,
  busyLabel,
  notice,
}: {
  id: string;
  title?: string;
  config: unknown;
  draft: string | undefined;
  onDraft: (text: string | undefined) => void;
  save: Action<Record<string, unknown>>;
  rows: number;
  hint: string;
  busyLabel: string;
  notice?: ReactNode;
}) {
  const parsed = draft === undefined ? undefined : parseConfigText(draft);
  const problem = parsed && !parsed.ok ? parsed.message : save.error?.message;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (parsed?.ok) save.mutate(parsed.value);
  };
  return (
    <form onSubmit={submit} className="card stack" aria-labelledby={title ? `${id}-title` : undefined}>
      {title && <h3 id={`${id}-title`}>{title}</h3>}
      <div className="field">
        <label htmlFor={`${id}-text`}>Configuration (JSON)</label>
        <textarea
          id={`${id}-text`}
          rows={rows}
          spellCheck={false}
          value={draft ?? configText(config)}
          onChange={(e) => onDraft(e.target.value)}
          aria-invalid={problem ? true : undefined}
          aria-describedby={`${id}-problem`}
        />
        <p id={`${id}-problem`} className={problem ? 'field-error' : 'hint'} role={problem ? 'alert' : undefined}>
          {problem ?? hint}
        </p>
      </div>
      {notice}
      <div className="row">
        <Button type="submit" busy={save.isPending} busyLabel={busyLabel} disabled={draft === undefined || !parsed?.ok}>
          Save configuration
        </Button>
        {draft !== undefined && (
          <Button
            className="button secondary"
            onClick={() => {
              onDraft(undefined);
              save.reset();
            }}
          >
            Discard changes
          </Button>
        )}
      </div>
    </form>
  );
}

/**
 * The backups of a configuration, newest first, each restored after a confirmation (the current
 * configuration is backed up first). `restoring` is the backup awaiting confirmation, held by the page.
 */
export function ConfigBackupList<B extends { id: string; timestamp: string }>({
  id,
  heading: Heading,
  backups,
  describe = (backup) => when(backup.timestamp),
  empty,
  restoring,
  onRestoring,
  restore,
  notice,
}: {
  id: string;
  heading: 'h2' | 'h3';
  backups: readonly B[];
  describe?: (backup: B) => ReactNode;
  empty: string;
  restoring: string | undefined;
  onRestoring: (backupId: string | undefined) => void;
  restore: Omit<Action<string>, 'reset'>;
  notice?: ReactNode;
}) {
  return (
    <section className="card" aria-labelledby={id}>
      <Heading id={id}>Backups</Heading>
      {backups.length === 0 ? (
        <p className="muted">{empty}</p>
      ) : (
        <ul className="stack plain">
          {backups.map((backup) => (
            <li key={backup.id} className="row">
              <span>{describe(backup)}</span>
              {restoring === backup.id ? (
                <Confirm
                  question={`Restore the configuration of ${when(backup.timestamp)}? The current one is backed up first.`}
                  confirmLabel="Restore"
                  busy={restore.isPending}
                  onConfirm={() => restore.mutate(backup.id)}
                  onCancel={() => onRestoring(undefined)}
                />
              ) : (
                <Button
                  className="button secondary"
                  aria-label={`Restore the backup of ${when(backup.timestamp)}`}
                  onClick={() => onRestoring(backup.id)}
                >
                  Restore
                </Button>
              )}
            </li>
          ))}
        </ul>
      )}
      <ErrorNote error={restore.error} />
      {notice}
    </section>
  );
}
