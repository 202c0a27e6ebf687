import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Link, NavLink, Outlet, useNavigate, useOutletContext, useParams } from 'react-router';
import { del, get, patch, post } from '../api.ts';
import { actionsFor, type AgentAction, type AgentStatusEvent } from '../events.ts';
import { PROVISION_STEPS, provisionStep, statusWords, when } from '../format.ts';
import { useAgentEvents } from '../live.ts';
import type { ActionAccepted, AgentDetail, Provisioned, Renamed, Token } from '../types.ts';
import { Button, Confirm, CopyButton, ErrorNote, Field, Loading, Notice, Select, StatusBadge } from '../ui.tsx';
import { HeartbeatPanel, TaskPanel } from './schedules.tsx';
import { AgentEventsPanel } from './agent-events.tsx';

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
        <p>
          Your agent runs the OpenClaw gateway in a container of its own. It takes a minute or two to start; you can
          watch it here.
        </p>
        <Field
          label="Agent name"
          required
          maxLength={64}
          value={name}
          onChange={(e) => setName(e.target.value)}
          hint="1 to 64 characters; you can rename it later."
        />
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
          <li
            key={label}
            className={index < step ? 'done' : index === step ? 'current' : undefined}
            aria-current={index === step ? 'step' : undefined}
          >
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
  ['channels', 'Channels'],
  ['snapshots', 'Snapshots'],
  ['config', 'Configuration'],
] as const;

/** The agent a page under /agents/:id works on, as its layout read it (kept current by the status events). */
export function useAgent(): AgentDetail {
  return useOutletContext<AgentDetail>();
}

/** Name, live status and the agent's pages; the page itself below. */
export function AgentLayout() {
  const { id = '' } = useParams();
  useAgentEvents();
  const agent = useQuery({
    queryKey: ['agent', id],
    queryFn: () => get<{ agent: AgentDetail; status: 'ok' }>(`/api/agents/${id}`),
  });
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
        <StatusBadge status={detail.status} hibernation={detail.hibernation} />
      </div>
      {detail.status === 'suspended' && detail.hibernation && (
        <p className="muted">{statusWords(detail.status, detail.hibernation).hint}</p>
      )}
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
          {/* Opening it wakes a hibernating agent. */}
          {(detail.status === 'running' || detail.status === 'suspended') && (
            <li>
              <a
                href={`/api/control-ui/${detail.id}/`}
                target="_blank"
                rel="noopener noreferrer"
                title="The agent's own OpenClaw Control UI, in a new tab"
              >
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
          <dt>Image</dt>
          <dd>{detail.images.current}</dd>
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
      <AgentEventsPanel agentId={detail.id} status={detail.status} />
    </>
  );
}

function Rename({ agent }: { agent: AgentDetail }) {
  const queries = useQueryClient();
  const [name, setName] = useState(agent.name);
  const rename = useMutation({
    mutationFn: () => patch<Renamed>(`/api/agents/${agent.id}`, { name }),
    onSuccess: () =>
      Promise.all([
        queries.invalidateQueries({ queryKey: ['agent', agent.id] }),
        queries.invalidateQueries({ queryKey: ['agents'] }),
      ]),
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

/** Each operation's words; those with a question ask first, and `danger` ones cannot be undone. */
const ACTIONS: Record<AgentAction, { label: string; busy: string; question?: string; danger?: boolean }> = {
  start: { label: 'Start', busy: 'Starting…' },
  stop: { label: 'Stop', busy: 'Stopping…' },
  restart: { label: 'Restart', busy: 'Restarting…' },
  repair: { label: 'Repair', busy: 'Repairing…' },
  'reset-memory': {
    label: 'Reset memory',
    busy: 'Resetting…',
    question: "Reset the agent's memory? Everything it remembers is erased. This cannot be undone.",
    danger: true,
  },
  update: {
    label: 'Update image',
    busy: 'Updating…',
    question:
      'Update the agent to another image? It restarts on the new image; if that does not become ready, the previous image is restored.',
  },
  delete: {
    label: 'Delete agent',
    busy: 'Deleting…',
    question:
      'Delete the agent? Its container, memory, configuration and schedules are removed. This cannot be undone.',
    danger: true,
  },
};

/** An operation as asked for; `image` for an update only. */
interface ActionRequest {
  action: AgentAction;
  image?: string;
}

/**
 * Every operation its status allows (events.ts `actionsFor`), on this agent. An operation is
 * queued (202) and ends on the status stream, which says how it went; delete is done when answered.
 */
function LifecyclePanel({ agent }: { agent: AgentDetail }) {
  const queries = useQueryClient();
  const navigate = useNavigate();
  const [asking, setAsking] = useState<AgentAction | undefined>();
  // The image an update asks for: offered first is one the agent does not run yet.
  const [image, setImage] = useState('');
  const ask = (action: AgentAction) => {
    if (action === 'update')
      setImage(agent.images.allowed.find((choice) => choice !== agent.images.current) ?? agent.images.current);
    setAsking(action);
  };
  // Filled by the status stream (live.ts) when an operation asked for here ends.
  const ended = useQuery<AgentStatusEvent | null>({
    queryKey: ['agent-action', agent.id],
    queryFn: () => null,
    staleTime: Number.POSITIVE_INFINITY,
  });
  const act = useMutation({
    mutationFn: ({ action, image }: ActionRequest): Promise<ActionAccepted | { id: string; deleted: true }> =>
      action === 'delete'
        ? del<{ id: string; deleted: true }>(`/api/agents/${agent.id}`)
        : post<ActionAccepted>(`/api/agents/${agent.id}/${action}`, image ? { image } : undefined),
    onMutate: () => queries.setQueryData(['agent-action', agent.id], null),
    onSuccess: async (_result, { action }) => {
      setAsking(undefined);
      if (action !== 'delete') return;
      queries.removeQueries({ queryKey: ['agent', agent.id] });
      await queries.invalidateQueries({ queryKey: ['agents'] });
      navigate('/dashboard');
    },
  });
  const queued = act.isSuccess && act.variables.action !== 'delete' && !ended.data;
  const entries = actionsFor(agent.status);
  return (
    <section className="card" aria-labelledby="lifecycle">
      <h2 id="lifecycle">Start, stop, repair and delete</h2>
      {agent.lastError && agent.status === 'error' && (
        <p className="muted">{agent.lastError} Repair rebuilds it from its configuration; delete removes it.</p>
      )}
      {agent.stopsBeyondPlanAt && (
        <p className="error" role="alert">
          Your plan no longer covers this agent: it stops on {when(agent.stopsBeyondPlanAt)}, its state kept. Choose a
          plan that covers it, or stop or delete another agent to keep this one.
        </p>
      )}
      <div className="row">
        {entries.map((action) => (
          <Button
            key={action}
            className={ACTIONS[action].danger ? 'button danger' : 'button secondary'}
            busy={(act.isPending || queued) && act.variables?.action === action}
            busyLabel={ACTIONS[action].busy}
            disabled={act.isPending || queued}
            onClick={() => (ACTIONS[action].question ? ask(action) : act.mutate({ action }))}
          >
            {ACTIONS[action].label}
          </Button>
        ))}
      </div>
      {asking && (
        <Confirm
          question={ACTIONS[asking].question ?? ''}
          confirmLabel={ACTIONS[asking].label}
          busy={act.isPending}
          onConfirm={() => act.mutate(asking === 'update' ? { action: asking, image } : { action: asking })}
          onCancel={() => setAsking(undefined)}
        >
          {asking === 'update' && (
            <Select label="Image" value={image} onChange={(event) => setImage(event.target.value)}>
              {agent.images.allowed.map((choice) => (
                <option key={choice} value={choice}>
                  {choice === agent.images.current ? `${choice} (current)` : choice}
                </option>
              ))}
            </Select>
          )}
        </Confirm>
      )}
      <ErrorNote error={act.error} />
      {queued && <Notice>{ACTIONS[act.variables.action].label}: queued, under way…</Notice>}
      {ended.data?.outcome === 'done' && (
        <Notice>{ACTIONS[ended.data.action as AgentAction]?.label ?? ended.data.action}: done.</Notice>
      )}
      {ended.data?.outcome === 'failed' && (
        <p role="alert" className="error">
          {ACTIONS[ended.data.action as AgentAction]?.label ?? ended.data.action} failed: {ended.data.error}
          {ended.data.action === 'update' && <>. It runs {agent.images.current}.</>}
        </p>
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
        <Button
          className="button secondary"
          busy={reveal.isPending}
          busyLabel="Fetching…"
          onClick={() => reveal.mutate()}
        >
          Show token
        </Button>
      )}
      <ErrorNote error={reveal.error} />
    </section>
  );
}
