import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { del, get, post } from '../api.ts';
import { usd, when } from '../format.ts';
import type { AgentList, Swarm, SwarmList, SwarmRun } from '../types.ts';
import { Button, Confirm, Empty, ErrorNote, Field, Loading, Select, TextArea, TableRegion } from '../ui.tsx';

const SETTLED = new Set(['completed', 'failed']);

/** One run, read again every 2 s until it settles: each member's status, answer and cost. */
function RunResult({ swarm, runId, names }: { swarm: Swarm; runId: string; names: Map<string, string> }) {
  const run = useQuery({
    queryKey: ['swarm', swarm.id, 'run', runId],
    queryFn: () => get<{ run: SwarmRun }>(`/api/swarms/${swarm.id}/runs/${runId}`),
    refetchInterval: (q) => (q.state.data && SETTLED.has(q.state.data.run.status) ? false : 2000),
  });
  if (run.isPending) return <Loading what="the run" />;
  if (run.isError) return <ErrorNote error={run.error} />;
  const { members, status, mode } = run.data.run;
  return (
    <TableRegion label="Run results" live>
      <table>
        <caption>
          Run ({mode}): {status}
        </caption>
        <thead>
          <tr>
            <th scope="col">Agent</th>
            <th scope="col">Status</th>
            <th scope="col">Answer</th>
            <th scope="col">Cost</th>
          </tr>
        </thead>
        <tbody>
          {members.map((m) => (
            <tr key={m.agentId}>
              <td>{names.get(m.agentId) ?? m.agentId}</td>
              <td>{m.status}</td>
              <td>{m.answer ?? m.error ?? '—'}</td>
              <td>{m.costUsd === null ? '—' : usd(m.costUsd)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableRegion>
  );
}

function SwarmCard({ swarm, names }: { swarm: Swarm; names: Map<string, string> }) {
  const queries = useQueryClient();
  const [message, setMessage] = useState('');
  const [mode, setMode] = useState<'all' | 'first' | 'broadcast'>('all');
  const [runId, setRunId] = useState<string | undefined>();
  const [deleting, setDeleting] = useState(false);
  const start = useMutation({
    mutationFn: () => post<{ run: SwarmRun }>(`/api/swarms/${swarm.id}/runs`, { message, mode }),
    onSuccess: (answer) => {
      setRunId(answer.run.id);
      setMessage('');
    },
  });
  const remove = useMutation({
    mutationFn: () => del(`/api/swarms/${swarm.id}`),
    onSuccess: () => queries.invalidateQueries({ queryKey: ['swarms'] }),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    start.mutate();
  };
  return (
    <section className="card" aria-labelledby={`swarm-${swarm.id}`}>
      <h2 id={`swarm-${swarm.id}`}>{swarm.name}</h2>
      <p>
        Members: {swarm.agentIds.map((id) => names.get(id) ?? id).join(', ') || 'none left'} · created{' '}
        {when(swarm.createdAt)}
      </p>
      <form onSubmit={submit}>
        <TextArea
          label={`Message to ${swarm.name}`}
          required
          maxLength={8000}
          value={message}
          onChange={(e) => setMessage(e.target.value)}
        />
        <div className="row">
          <Select
            label={`How ${swarm.name} answers`}
            value={mode}
            onChange={(e) => setMode(e.target.value as typeof mode)}
          >
            <option value="all">Collect every answer</option>
            <option value="first">First answer only</option>
            <option value="broadcast">Deliver only (no answers)</option>
          </Select>
          <Button type="submit" busy={start.isPending} busyLabel="Sending…">
            Send to the swarm
          </Button>
        </div>
      </form>
      <ErrorNote error={start.error} />
      {runId && <RunResult swarm={swarm} runId={runId} names={names} />}
      {deleting ? (
        <Confirm
          question={`Delete the swarm “${swarm.name}” and its runs? The agents stay.`}
          confirmLabel="Delete swarm"
          busy={remove.isPending}
          onConfirm={() => remove.mutate()}
          onCancel={() => setDeleting(false)}
        />
      ) : (
        <Button
          className="button danger"
          aria-label={`Delete the swarm ${swarm.name}`}
          onClick={() => setDeleting(true)}
        >
          Delete
        </Button>
      )}
      <ErrorNote error={remove.error} />
    </section>
  );
}

/** Swarms: named groups of the user's agents that one message goes to. */
export function SwarmsPage() {
  const queries = useQueryClient();
  const swarms = useQuery({ queryKey: ['swarms'], queryFn: () => get<SwarmList>('/api/swarms') });
  const agents = useQuery({ queryKey: ['agents'], queryFn: () => get<AgentList>('/api/agents') });
  const [name, setName] = useState('');
  const [chosen, setChosen] = useState<string[]>([]);
  const create = useMutation({
    mutationFn: () => post('/api/swarms', { name, agentIds: chosen }),
    onSuccess: () => {
      setName('');
      setChosen([]);
      return queries.invalidateQueries({ queryKey: ['swarms'] });
    },
  });
  const list = agents.data?.agents ?? [];
  const names = new Map(list.map((a) => [a.id, a.name]));
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate();
  };
  return (
    <>
      <h1>Swarms</h1>
      <p>A swarm sends one message to several of your agents as a turn each and collects their answers.</p>
      <form onSubmit={submit} className="card">
        <h2>New swarm</h2>
        <Field label="Swarm name" required maxLength={64} value={name} onChange={(e) => setName(e.target.value)} />
        <fieldset>
          <legend>Members</legend>
          {list.length === 0 && <p>You have no agents yet.</p>}
          {list.map((agent) => (
            <label key={agent.id} className="check">
              <input
                type="checkbox"
                checked={chosen.includes(agent.id)}
                onChange={(e) =>
                  setChosen(e.target.checked ? [...chosen, agent.id] : chosen.filter((id) => id !== agent.id))
                }
              />{' '}
              {agent.name}
            </label>
          ))}
        </fieldset>
        <Button type="submit" busy={create.isPending} busyLabel="Creating…" disabled={chosen.length === 0}>
          Create swarm
        </Button>
        <ErrorNote error={create.error} />
      </form>
      {swarms.isPending ? (
        <Loading what="your swarms" />
      ) : swarms.isError ? (
        <ErrorNote error={swarms.error} />
      ) : swarms.data.swarms.length === 0 ? (
        <Empty title="No swarms">
          <p>Group two or more agents to send them a message together.</p>
        </Empty>
      ) : (
        swarms.data.swarms.map((swarm) => <SwarmCard key={swarm.id} swarm={swarm} names={names} />)
      )}
    </>
  );
}
