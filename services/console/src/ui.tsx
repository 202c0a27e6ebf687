import { type ReactNode, type RefObject, useId, useLayoutEffect, useState } from 'react';
import { ApiError } from './api.ts';
import { statusWords } from './format.ts';

/** A control's error, or else its hint, under it: what its `aria-describedby` names. */
function FieldNote({ id, hint, error }: { id: string; hint?: string; error?: string }) {
  if (!error && !hint) return null;
  return (
    <p id={`${id}-note`} className={error ? 'field-error' : 'hint'}>
      {error || hint}
    </p>
  );
}

/** A labelled input: the label is tied to the control, so people, screen readers and tests find it by name. */
export function Field({
  label,
  hint,
  error,
  ...input
}: { label: string; hint?: string; error?: string } & React.InputHTMLAttributes<HTMLInputElement>) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        aria-invalid={error ? true : undefined}
        aria-describedby={hint || error ? `${id}-note` : undefined}
        {...input}
      />
      <FieldNote id={id} hint={hint} error={error} />
    </div>
  );
}

/** A labelled multi-line text box (messages, MEMORY.md, SKILL.md). */
export function TextArea({
  label,
  hint,
  error,
  ...area
}: { label: string; hint?: string; error?: string } & React.TextareaHTMLAttributes<HTMLTextAreaElement>) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <textarea
        id={id}
        aria-invalid={error ? true : undefined}
        aria-describedby={hint || error ? `${id}-note` : undefined}
        {...area}
      />
      <FieldNote id={id} hint={hint} error={error} />
    </div>
  );
}

export function Select({
  label,
  children,
  ...select
}: { label: string; children: ReactNode } & React.SelectHTMLAttributes<HTMLSelectElement>) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select id={id} {...select}>
        {children}
      </select>
    </div>
  );
}

/** The API's message for a failed call, announced to screen readers. */
export function ErrorNote({ error }: { error: unknown }) {
  if (!error) return null;
  const message = error instanceof ApiError || error instanceof Error ? error.message : String(error);
  return (
    <p className="error" role="alert">
      {message}
    </p>
  );
}

export function Notice({ children }: { children: ReactNode }) {
  return (
    <p className="notice" role="status">
      {children}
    </p>
  );
}

/** A button that shows its work while `busy` and cannot be pressed twice. */
export function Button({
  busy,
  busyLabel,
  children,
  className,
  ...button
}: { busy?: boolean; busyLabel?: string } & React.ButtonHTMLAttributes<HTMLButtonElement>) {
  return (
    <button
      type="button"
      className={className ?? 'button'}
      disabled={busy || button.disabled}
      aria-busy={busy || undefined}
      {...button}
    >
      {busy ? (
        <>
          <span className="spinner" aria-hidden="true" />
          {busyLabel ?? 'Working…'}
        </>
      ) : (
        children
      )}
    </button>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <p className="loading" role="status">
      <span className="spinner" aria-hidden="true" />
      Loading {what}…
    </p>
  );
}

/** An empty list that says what to do next. */
export function Empty({ title, children }: { title: string; children: ReactNode }) {
  return (
    <div className="empty">
      <h3>{title}</h3>
      {children}
    </div>
  );
}

export function StatusBadge({ status, hibernation }: { status: string; hibernation?: 'paused' | 'stopped' | null }) {
  const words = statusWords(status, hibernation);
  return (
    <span className={`badge badge-${words.tone}`} title={words.hint}>
      {!words.settled && <span className="spinner" aria-hidden="true" />}
      {words.label}
    </span>
  );
}

/** A value copied to the clipboard on request, saying that it was. */
export function CopyButton({ value, label }: { value: string; label: string }) {
  const [copied, setCopied] = useState(false);
  const [failed, setFailed] = useState(false);
  return (
    <Button
      className="button secondary"
      aria-label={label}
      onClick={() => {
        navigator.clipboard.writeText(value).then(
          () => {
            setCopied(true);
            setFailed(false);
          },
          () => setFailed(true),
        );
      }}
    >
      {copied ? 'Copied' : failed ? 'Copy failed: select and copy' : 'Copy'}
    </Button>
  );
}

/** Asks before a consequential action; nothing happens until the person confirms. `children`: what the answer needs chosen (an image to update to). */
export function Confirm({
  question,
  confirmLabel,
  onConfirm,
  onCancel,
  busy,
  children,
}: {
  question: string;
  confirmLabel: string;
  onConfirm: () => void;
  onCancel: () => void;
  busy?: boolean;
  children?: ReactNode;
}) {
  return (
    <div className="confirm" role="alertdialog" aria-label={question}>
      <p>{question}</p>
      {children}
      <div className="row">
        <Button className="button danger" busy={busy} onClick={onConfirm}>
          {confirmLabel}
        </Button>
        <Button className="button secondary" onClick={onCancel} disabled={busy}>
          Cancel
        </Button>
      </div>
    </div>
  );
}

export function Meter({ label, share, text }: { label: string; share: number; text: string }) {
  return (
    <div className="meter">
      <div className="meter-label">
        <span>{label}</span>
        <span>{text}</span>
      </div>
      <meter className="meter-track" min={0} max={1} value={share} aria-label={label} aria-valuetext={text}>
        {text}
      </meter>
    </div>
  );
}

/** Keeps a scrolling box at its end each time `content` changes, while `on` (a log or a conversation). */
export function useScrollToEnd(box: RefObject<HTMLElement | null>, content: unknown, on = true) {
  useLayoutEffect(() => {
    if (on && content !== undefined && box.current) box.current.scrollTop = box.current.scrollHeight;
  }, [box, content, on]);
}

/** A table that may scroll sideways on a narrow screen: a labelled region the keyboard can reach and scroll. */
export function TableRegion({
  label,
  card,
  live,
  children,
}: {
  label: string;
  card?: boolean;
  live?: boolean;
  children: ReactNode;
}) {
  return (
    <section
      className={card ? 'table-wrap card' : 'table-wrap'}
      aria-label={label}
      aria-live={live ? 'polite' : undefined}
      // biome-ignore lint/a11y/noNoninteractiveTabindex: the table scrolls sideways on a phone, and the keyboard must reach it
      tabIndex={0}
    >
      {children}
    </section>
  );
}
