import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useId, useState } from 'react';
import { get, post, put } from '../api.ts';
import {
  APPLIED_WORDS,
  changeOf,
  type CommonFields,
  commonFieldsOf,
  DM_POLICIES,
  LOG_LEVELS,
} from '../agent-config-form.ts';
import { ConfigBackupList, ConfigDocumentForm } from '../config-editor.tsx';
import { configText } from '../config-text.ts';
import { when } from '../format.ts';
import type { AgentConfig, AgentConfigSave } from '../types.ts';
import { Button, ErrorNote, Field, Loading, Notice } from '../ui.tsx';
import { useAgent } from './agents.tsx';

function Select({
  label,
  value,
  options,
  onChange,
}: {
  label: string;
  value: string;
  options: readonly string[];
  onChange: (value: string) => void;
}) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select id={id} value={value} onChange={(e) => onChange(e.target.value)}>
        {options.map((option) => (
          <option key={option} value={option}>
            {option}
          </option>
        ))}
      </select>
    </div>
  );
}

function Check({
  label,
  checked,
  onChange,
}: {
  label: string;
  checked: boolean;
  onChange: (checked: boolean) => void;
}) {
  const id = useId();
  return (
    <div className="check">
      <input id={id} type="checkbox" checked={checked} onChange={(e) => onChange(e.target.checked)} />
      <label htmlFor={id}>{label}</label>
    </div>
  );
}

/**
 * One agent's configuration: the common fields as a form, the whole document as JSON, both checked
 * by the installed OpenClaw when saved (its refusal names the path), how the save reached the agent
 * (hot reload or restart), what its gateway runs with, and its last 10 backups to restore.
 */
export function AgentConfigPage() {
  const agent = useAgent();
  const queries = useQueryClient();
  const key = ['agent-config', agent.id];
  const view = useQuery({ queryKey: key, queryFn: () => get<AgentConfig>(`/api/agents/${agent.id}/config`) });
  const [fields, setFields] = useState<CommonFields | undefined>();
  const [text, setText] = useState<string | undefined>();
  const [restoring, setRestoring] = useState<string | undefined>();
  const [answer, setAnswer] = useState<AgentConfigSave | undefined>();
  const saved = (result: AgentConfigSave) => {
    setAnswer(result);
    setFields(undefined);
    setText(undefined);
    setRestoring(undefined);
    return queries.invalidateQueries({ queryKey: key });
  };
  const saveFields = useMutation({
    mutationFn: (value: CommonFields) => put<AgentConfigSave>(`/api/agents/${agent.id}/config`, changeOf(value)),
    onMutate: () => setAnswer(undefined),
    onSuccess: saved,
  });
  const saveDocument = useMutation({
    mutationFn: (value: Record<string, unknown>) =>
      put<AgentConfigSave>(`/api/agents/${agent.id}/config`, { config: value }),
    onMutate: () => setAnswer(undefined),
    onSuccess: saved,
  });
  const restore = useMutation({
    mutationFn: (backupId: string) => post<AgentConfigSave>(`/api/agents/${agent.id}/config/restore`, { backupId }),
    onMutate: () => setAnswer(undefined),
    onSuccess: saved,
  });

  if (view.isPending) return <Loading what="the configuration" />;
  if (view.isError) return <ErrorNote error={view.error} />;
  const current = view.data;
  const form = fields ?? commonFieldsOf(current.config as Record<string, unknown>, current.model);
  const set = <K extends keyof CommonFields>(name: K, value: CommonFields[K]) => setFields({ ...form, [name]: value });
  const submitFields = (event: FormEvent) => {
    event.preventDefault();
    saveFields.mutate(form);
  };

  return (
    <>
      <h2>Configuration</h2>
      <p className="muted">
        {current.checkedBy
          ? `Checked by ${current.checkedBy}, the OpenClaw this agent runs, when you save. `
          : "Checked by the platform's rules when you save (no OpenClaw is installed to check it). "}
        Settings the gateway takes live are applied without a restart; the others restart the agent, keeping its memory.
      </p>
      {answer && <Notice>{APPLIED_WORDS[answer.applied]}</Notice>}

      <form onSubmit={submitFields} className="card stack" aria-labelledby="common-settings">
        <h3 id="common-settings">Common settings</h3>
        <Field
          label="Model"
          hint="auto, or a model id such as openai/gpt-4o-mini"
          value={form.model}
          onChange={(e) => set('model', e.target.value)}
        />
        <Select label="Log level" value={form.logLevel} options={LOG_LEVELS} onChange={(v) => set('logLevel', v)} />
        <fieldset className="stack">
          <legend>Channels</legend>
          <Check label="Telegram on" checked={form.telegram} onChange={(v) => set('telegram', v)} />
          <Check label="Discord on" checked={form.discord} onChange={(v) => set('discord', v)} />
        </fieldset>
        <Field
          label="Session reset triggers"
          hint="Messages that start a new session, separated by spaces"
          value={form.resetTriggers}
          onChange={(e) => set('resetTriggers', e.target.value)}
        />
        <Select
          label="Telegram DM policy"
          value={form.dmPolicy}
          options={DM_POLICIES}
          onChange={(v) => set('dmPolicy', v)}
        />
        <ErrorNote error={saveFields.error} />
        <div className="row">
          <Button
            type="submit"
            busy={saveFields.isPending}
            busyLabel="Checking and saving…"
            disabled={fields === undefined}
          >
            Save settings
          </Button>
        </div>
      </form>

      <ConfigDocumentForm
        id="agent-config"
        title="The whole configuration"
        config={current.config}
        draft={text}
        onDraft={setText}
        save={saveDocument}
        rows={16}
        hint="OpenClaw's keys. A refusal names the path it is about."
        busyLabel="Checking and saving…"
      />

      <ConfigBackupList
        id="agent-backups"
        heading="h3"
        backups={current.backups}
        describe={(backup) => `${when(backup.timestamp)} · ${backup.model}`}
        empty="No backups yet: each save keeps the previous configuration here (the last 10)."
        restoring={restoring}
        onRestoring={setRestoring}
        restore={restore}
      />

      <details className="card">
        <summary>What its gateway runs with (openclaw.json, secrets left out)</summary>
        <pre>{configText(current.appliedConfig)}</pre>
      </details>
    </>
  );
}
