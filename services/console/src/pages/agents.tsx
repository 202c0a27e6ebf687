import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Link, NavLink, Outlet, useNavigate, useOutletContext, useParams } from 'react-router';
import { get, patch, post } from '../api.ts';
import { PROVISION_STEPS, provisionStep, statusWords, when } from '../format.ts';
import { useAgentEvents } from '../live.ts';
import { useSession } from '../session.ts';
import type { AgentDetail, Instance, Lifecycle, Provisioned, Renamed, Token } from '../types.ts';
import { Button, Confirm, CopyButton, ErrorNote, Field, Loading, Notice, StatusBadge } from '../ui.tsx';
import { HeartbeatPanel, TaskPanel } from './schedules.tsx';

export function NewAgentPage() {
  const navigate = useNavigate();
  const queries = useQueryClient();
  const [name, setName] = useState('');
  const provision = useMutation({
    mutationFn: () => post<Provisioned>('/api/agents/provision', { name }),
    onSuccess: async (result) => {
      await queries.invalidateQueries({ queryKey: ['agents'] });
      navigate(`/agents/${result.agent.id}`);
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    provision.mutate();
  };
  return (
    <>
      <h1>Provision an agent</h1>
      <form onSubmit={submit} className="card stack">
        <p>Your agent runs the OpenClaw gateway in a container of its own. It takes a minute or two to start; you can watch it here.</p>
        <Field label="Agent name" required maxLength={64} value={name} onChange={(e) => setName(e.target.value)} hint="1 to 64 characters; you can rename it later." />
        <ErrorNote error={provision.error} />
        {provision.error && 'code' in provision.error && provision.error.code === 'SUBSCRIPTION_REQUIRED' && (
          <p>
            <Link to="/billing">Choose a plan</Link> first.
          </p>
        )}
        <Button type="submit" busy={provision.isPending} busyLabel="Provisioning…">
          Provision
        </Button>
      </form>
    </>
  );
}

/** The steps from request to running, the current one marked; an error in words instead when it failed. */
function ProvisionProgress({ agent }: { agent: AgentDetail }) {
  const step = provisionStep(agent.status);
  if (agent.status === 'error')
    return (
      <p className="error" role="alert">
        The agent failed to start: {agent.lastError ?? 'no reason was recorded'}. Try Repair, or Restart.
      </p>
    );
  if (step < 0 || step === 3) return null;
  return (
    <section aria-label="Provisioning progress">
      <ol className="steps">
        {PROVISION_STEPS.map((label, index) => (
          <li key={label} className={index < step ? 'done' : index === step ? 'current' : undefined} aria-current={index === step ? 'step' : undefined}>
            {label}
          </li>
        ))}
      </ol>
      <p role="status" className="muted">
        <span className="spinner" aria-hidden="true" />
        {statusWords(agent.status).label}: the container is starting; this page updates by itself.
      </p>
    </section>
  );
}

/** The agent's pages, each a sub-route of /agents/:id; they work on the agent this layout has read. */
const AGENT_PAGES = [
  ['', 'Overview'],
  ['chat', 'Chat'],
  ['logs', 'Logs'],
  ['files', 'Files'],
  ['memory', 'Memory'],
  ['skills', 'Skills'],
  ['metrics', 'Metrics'],
  ['devices', 'Devices'],
] as const;

/** The agent a page under /agents/:id works on, as its layout read it (kept current by the status events). */
export function useAgent(): AgentDetail {
  return useOutletContext<AgentDetail>();
}

/** Name, live status and the agent's pages; the page itself below. */
export function AgentLayout() {
  const { id = '' } = useParams();
  useAgentEvents();
  const agent = useQuery({ queryKey: ['agent', id], queryFn: () => get<{ agent: AgentDetail; status: 'ok' }>(`/api/agents/${id}`) });
  if (agent.isPending) return <Loading what="the agent" />;
  if (agent.isError)
    return (
      <>
        <h1>Agent</h1>
        <ErrorNote error={agent.error} />
        <Link to="/dashboard">Back to the dashboard</Link>
      </>
    );
  const detail = agent.data.agent;
  return (
    <>
      <p>
        <Link to="/dashboard">← Dashboard</Link>
      </p>
      <div className="title-row">
        <h1>{detail.name}</h1>
        <StatusBadge status={detail.status} />
      </div>
      <ProvisionProgress agent={detail} />
      <nav aria-label="Agent">
        <ul className="tabs">
          {AGENT_PAGES.map(([path, label]) => (
            <li key={label}>
              <NavLink to={path ? `/agents/${detail.id}/${path}` : `/agents/${detail.id}`} end>
                {label}
              </NavLink>
            </li>
          ))}
          {/* The agent's own OpenClaw page, through the platform's proxy (the session cookie; never the gateway token); noopener: it gets no handle on this page. */}
          {detail.status === 'running' && (
            <li>
              <a href={`/api/control-ui/${detail.id}/`} target="_blank" rel="noopener noreferrer" title="The agent's own OpenClaw Control UI, in a new tab">
                Control UI ↗
              </a>
            </li>
          )}
        </ul>
      </nav>
      <Outlet context={detail} />
    </>
  );
}

export function AgentOverviewPage() {
  const detail = useAgent();
  return (
    <>
      <section className="card" aria-labelledby="about">
        <h2 id="about">About</h2>
        <dl className="facts">
          <dt>Model</dt>
          <dd>{detail.model}</dd>
          <dt>Plan</dt>
          <dd>{detail.plan}</dd>
          <dt>Address</dt>
          <dd>{detail.url}</dd>
          <dt>Created</dt>
          <dd>{when(detail.createdAt)}</dd>
          <dt>Updated</dt>
          <dd>{when(detail.updatedAt)}</dd>
        </dl>
      </section>
      <Rename agent={detail} />
      <LifecyclePanel agent={detail} />
      <TokenPanel agentId={detail.id} />
      <TaskPanel agentId={detail.id} />
      <HeartbeatPanel agentId={detail.id} />
    </>
  );
}

function Rename({ agent }: { agent: AgentDetail }) {
  const queries = useQueryClient();
  const [name, setName] = useState(agent.name);
  const rename = useMutation({
    mutationFn: () => patch<Renamed>(`/api/agents/${agent.id}`, { name }),
    onSuccess: () => Promise.all([queries.invalidateQueries({ queryKey: ['agent', agent.id] }), queries.invalidateQueries({ queryKey: ['agents'] })]),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    rename.mutate();
  };
  return (
    <section className="card" aria-labelledby="rename">
      <h2 id="rename">Name</h2>
      <form onSubmit={submit} className="row">
        <Field label="New name" required maxLength={64} value={name} onChange={(e) => setName(e.target.value)} />
        <Button type="submit" busy={rename.isPending} busyLabel="Renaming…" disabled={name.trim() === agent.name}>
          Rename
        </Button>
      </form>
      <ErrorNote error={rename.error} />
      {rename.isSuccess && <Notice>Renamed to {rename.data.agent.name}.</Notice>}
    </section>
  );
}

const ACTIONS = [
  { action: 'start', label: 'Start', question: undefined },
  { action: 'stop', label: 'Stop', question: 'Stop the agent? It stops answering until started again.' },
  { action: 'restart', label: 'Restart', question: 'Restart the agent? Conversations in progress are cut off.' },
  { action: 'repair', label: 'Repair', question: 'Repair the agent? Its container is rebuilt from its configuration; its memory is kept.' },
  { action: 'reset-memory', label: 'Reset memory', question: "Reset the agent's memory? Everything it remembers is erased. This cannot be undone." },
] as const;

/**
 * Start, stop, restart, repair and reset memory. The web API offers these on the user's runtime
 * instance (`/api/instance/:userId/:action`), so they are shown on the agent that is that instance.
 */
function LifecyclePanel({ agent }: { agent: AgentDetail }) {
  const session = useSession();
  const queries = useQueryClient();
  const userId = session.data?.user?.id ?? '';
  const instance = useQuery({ queryKey: ['instance', userId], queryFn: () => get<Instance>(`/api/instance/${userId}`), enabled: Boolean(userId) });
  const [asking, setAsking] = useState<(typeof ACTIONS)[number] | undefined>();
  const act = useMutation({
    mutationFn: (action: string) => post<Lifecycle>(`/api/instance/${userId}/${action}`),
    onSuccess: () => {
      setAsking(undefined);
      return Promise.all([queries.invalidateQueries({ queryKey: ['agent', agent.id] }), queries.invalidateQueries({ queryKey: ['instance', userId] })]);
    },
  });
  const isInstance = instance.data?.instanceId === agent.id;
  return (
    <section className="card" aria-labelledby="lifecycle">
      <h2 id="lifecycle">Start, stop and repair</h2>
      {instance.isPending ? (
        <Loading what="the runtime" />
      ) : !isInstance ? (
        <p className="muted">
          {instance.isError ? instance.error.message : 'Lifecycle actions apply to your current runtime instance'}
          {instance.data ? ` (${instance.data.name})` : ''}; this agent is not it.
        </p>
      ) : (
        <>
          <p className="muted">
            Container: {instance.data?.health}
            {instance.data?.startedAt ? `, started ${when(instance.data.startedAt)}` : ''}
          </p>
          <div className="row">
            {ACTIONS.map((entry) => (
              <Button
                key={entry.action}
                className={entry.action === 'reset-memory' ? 'button danger' : 'button secondary'}
                busy={act.isPending && act.variables === entry.action}
                busyLabel={`${entry.label}…`}
                disabled={act.isPending}
                onClick={() => (entry.question ? setAsking(entry) : act.mutate(entry.action))}
              >
                {entry.label}
              </Button>
            ))}
          </div>
          {asking && <Confirm question={asking.question ?? ''} confirmLabel={asking.label} busy={act.isPending} onConfirm={() => act.mutate(asking.action)} onCancel={() => setAsking(undefined)} />}
          <ErrorNote error={act.error} />
          {act.isSuccess && <Notice>{act.data.message}</Notice>}
        </>
      )}
    </section>
  );
}

/** The gateway token, hidden until asked for, then shown with a copy button. */
function TokenPanel({ agentId }: { agentId: string }) {
  const reveal = useMutation({ mutationFn: () => get<Token>(`/api/agents/${agentId}/token`) });
  return (
    <section className="card" aria-labelledby="token">
      <h2 id="token">Gateway token</h2>
      <p className="muted">What an OpenClaw client needs to talk to this agent's gateway. Keep it secret.</p>
      {reveal.isSuccess ? (
        <div className="row">
          <code className="secret">{reveal.data.token}</code>
          <CopyButton value={reveal.data.token} label="Copy the gateway token" />
          <Button className="button secondary" onClick={() => reveal.reset()}>
            Hide
          </Button>
        </div>
      ) : (
        <Button className="button secondary" busy={reveal.isPending} busyLabel="Fetching…" onClick={() => reveal.mutate()}>
          Show token
        </Button>
      )}
      <ErrorNote error={reveal.error} />
    </section>
  );
}
