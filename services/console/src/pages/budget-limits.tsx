import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useId, useState } from 'react';
import { del, get, put } from '../api.ts';
import { when } from '../format.ts';
import type { AgentList, Keys, MinuteLimits, MinuteLimitsInput, OwnKey, OwnKeys } from '../types.ts';
import { Button, ErrorNote, Field, Loading, Notice } from '../ui.tsx';

const PROVIDERS: OwnKey['provider'][] = ['openai', 'anthropic', 'gemini', 'groq', 'openrouter'];

function Choice({
  label,
  value,
  options,
  onChange,
}: {
  label: string;
  value: string;
  options: { value: string; label: string }[];
  onChange: (value: string) => void;
}) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select id={id} value={value} onChange={(e) => onChange(e.target.value)}>
        {options.map((option) => (
          <option key={option.value} value={option.value}>
            {option.label}
          </option>
        ))}
      </select>
    </div>
  );
}

const perMinute = (text: string): number | null => (text.trim() === '' ? null : Number(text));

/** One agent's or API key's AI requests and tokens per minute, within the plan's caps (empty: none). */
function MinuteLimitsForm({ path, what }: { path: string; what: 'agent' | 'key' }) {
  const queries = useQueryClient();
  const limits = useQuery({ queryKey: ['minute-limits', path], queryFn: () => get<MinuteLimits>(path) });
  const [edits, setEdits] = useState<{ requests?: string; tokens?: string }>({});
  const save = useMutation({
    mutationFn: (body: MinuteLimitsInput) => put<MinuteLimits>(path, body),
    onSuccess: () => {
      setEdits({});
      // A key's limits are shown in the keys list too.
      return Promise.all([
        queries.invalidateQueries({ queryKey: ['minute-limits', path] }),
        what === 'key' && queries.invalidateQueries({ queryKey: ['keys'] }),
      ]);
    },
  });
  if (limits.isPending) return <Loading what={`the ${what}'s limits`} />;
  if (limits.isError) return <ErrorNote error={limits.error} />;
  const { caps } = limits.data;
  const requests =
    edits.requests ?? (limits.data.requestsPerMinute === null ? '' : String(limits.data.requestsPerMinute));
  const tokens = edits.tokens ?? (limits.data.tokensPerMinute === null ? '' : String(limits.data.tokensPerMinute));
  const submit = (event: FormEvent) => {
    event.preventDefault();
    save.mutate({ requestsPerMinute: perMinute(requests), tokensPerMinute: perMinute(tokens) });
  };
  // No `max` on the fields: a value past the plan's cap reaches the API, whose refusal names the cap.
  return (
    <form onSubmit={submit} className="row">
      <Field
        label="Requests per minute"
        type="number"
        min={1}
        step={1}
        value={requests}
        onChange={(e) => setEdits({ ...edits, requests: e.target.value })}
        hint={`Empty: no limit. Your plan allows up to ${caps.requestsPerMinute}.`}
      />
      <Field
        label="Tokens per minute"
        type="number"
        min={1}
        step={1}
        value={tokens}
        onChange={(e) => setEdits({ ...edits, tokens: e.target.value })}
        hint={`Empty: no limit. Your plan allows up to ${caps.tokensPerMinute}.`}
      />
      <Button type="submit" busy={save.isPending} busyLabel="Saving…">
        Save {what} limits
      </Button>
      <ErrorNote error={save.error} />
      {save.isSuccess && <Notice>Saved.</Notice>}
    </form>
  );
}

/** Who a limits panel sets limits for: agents or API keys, listed by one query. */
interface LimitsSubject {
  what: 'agent' | 'key';
  heading: string;
  explanation: string;
  plural: string;
  choiceLabel: string;
  list: { isPending: boolean; isError: boolean; error: unknown; items: { value: string; label: string }[] };
  pathOf: (id: string) => string;
}

/** Pick one of the subjects, set its requests and tokens per minute. */
function MinuteLimitsPanel({ subject }: { subject: LimitsSubject }) {
  const [chosen, setChosen] = useState<string | undefined>();
  const { list } = subject;
  const id = chosen ?? list.items[0]?.value;
  const headingId = `${subject.what}-limits`;
  return (
    <section className="card" aria-labelledby={headingId}>
      <h2 id={headingId}>{subject.heading}</h2>
      <p className="muted">{subject.explanation}</p>
      {list.isPending ? (
        <Loading what={`your ${subject.plural}`} />
      ) : list.isError ? (
        <ErrorNote error={list.error} />
      ) : !id ? (
        <p className="muted">No {subject.plural} yet.</p>
      ) : (
        <>
          <Choice label={subject.choiceLabel} value={id} options={list.items} onChange={setChosen} />
          <MinuteLimitsForm key={id} path={subject.pathOf(id)} what={subject.what} />
        </>
      )}
    </section>
  );
}

/** Per-agent AI pace. */
export function AgentLimitsPanel() {
  const agents = useQuery({ queryKey: ['agents'], queryFn: () => get<AgentList>('/api/agents') });
  const items = (agents.data?.agents ?? []).map((a) => ({ value: a.id, label: a.name }));
  return (
    <MinuteLimitsPanel
      subject={{
        what: 'agent',
        heading: 'Agent AI limits',
        explanation:
          "Over a limit, the agent's model calls wait: they are refused with a time to retry until the minute ends.",
        plural: 'agents',
        choiceLabel: 'Agent',
        list: { isPending: agents.isPending, isError: agents.isError, error: agents.error, items },
        pathOf: (id) => `/api/agents/${id}/limits`,
      }}
    />
  );
}

/** Per-key AI pace. */
export function KeyLimitsPanel() {
  const keys = useQuery({ queryKey: ['keys'], queryFn: () => get<Keys>('/api/keys?limit=100') });
  const items = (keys.data?.keys ?? []).map((k) => ({ value: k.id, label: `${k.name} (${k.prefix}…)` }));
  return (
    <MinuteLimitsPanel
      subject={{
        what: 'key',
        heading: 'API key AI limits',
        explanation:
          'Over a limit, calls made with the key are refused with a time to retry until the minute ends; your other keys are not affected.',
        plural: 'API keys',
        choiceLabel: 'API key',
        list: { isPending: keys.isPending, isError: keys.isError, error: keys.error, items },
        pathOf: (id) => `/api/keys/${id}/limits`,
      }}
    />
  );
}

/** The user's own provider keys (BYOK): write-only, shown by their last 4 characters. */
export function ProviderKeysPanel() {
  const queries = useQueryClient();
  const keys = useQuery({ queryKey: ['provider-keys'], queryFn: () => get<OwnKeys>('/api/billing/provider-keys') });
  const [provider, setProvider] = useState<OwnKey['provider']>('openai');
  const [apiKey, setApiKey] = useState('');
  const refresh = () => queries.invalidateQueries({ queryKey: ['provider-keys'] });
  const store = useMutation({
    mutationFn: () => put<OwnKey>(`/api/billing/provider-keys/${provider}`, { apiKey }),
    onSuccess: () => {
      setApiKey('');
      return refresh();
    },
  });
  const remove = useMutation({
    mutationFn: (name: OwnKey['provider']) => del<OwnKeys>(`/api/billing/provider-keys/${name}`),
    onSuccess: refresh,
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    store.mutate();
  };
  return (
    <section className="card" aria-labelledby="own-keys">
      <h2 id="own-keys">Your own provider keys</h2>
      <p className="muted">
        Calls for a provider you bring a key for go on your key: its provider bills you, and they draw nothing from your
        allowance or credits.
      </p>
      {keys.isPending ? (
        <Loading what="your keys" />
      ) : keys.isError ? (
        <ErrorNote error={keys.error} />
      ) : keys.data.keys.length === 0 ? (
        <p className="muted">None: every call uses the platform's keys.</p>
      ) : (
        <ul>
          {keys.data.keys.map((k) => (
            <li key={k.provider} className="row">
              <span>
                {k.provider}: ends in <code>{k.hint}</code>, saved {when(k.updatedAt)}
              </span>
              <Button
                busy={remove.isPending && remove.variables === k.provider}
                busyLabel="Removing…"
                onClick={() => remove.mutate(k.provider)}
                aria-label={`Remove the ${k.provider} key`}
              >
                Remove
              </Button>
            </li>
          ))}
        </ul>
      )}
      <ErrorNote error={remove.error} />
      <form onSubmit={submit} className="row">
        <Choice
          label="Provider"
          value={provider}
          options={PROVIDERS.map((p) => ({ value: p, label: p }))}
          onChange={(value) => setProvider(value as OwnKey['provider'])}
        />
        <Field
          label="API key"
          type="password"
          autoComplete="off"
          required
          minLength={8}
          value={apiKey}
          onChange={(e) => setApiKey(e.target.value)}
          hint="Stored sealed; it is never shown again."
        />
        <Button type="submit" busy={store.isPending} busyLabel="Saving…">
          Save key
        </Button>
      </form>
      <ErrorNote error={store.error} />
      {store.isSuccess && <Notice>Saved.</Notice>}
    </section>
  );
}
