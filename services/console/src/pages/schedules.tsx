import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Link } from 'react-router';
import { del, get, post, put, query } from '../api.ts';
import { when } from '../format.ts';
import type { HeartbeatResponse, Task, Tasks } from '../types.ts';
import { Button, Empty, ErrorNote, Field, Loading, Notice } from '../ui.tsx';
import { useAgents } from './dashboard.tsx';

/** Scheduled prompts, of one agent or of all; add, pause, resume, delete. */
export function TaskPanel({ agentId }: { agentId?: string }) {
  const queries = useQueryClient();
  const key = ['tasks', agentId ?? 'all'];
  const tasks = useQuery({ queryKey: key, queryFn: () => get<Tasks>(`/api/scheduled-tasks${query({ agentId, limit: 100 })}`) });
  const refresh = () => queries.invalidateQueries({ queryKey: ['tasks'] });
  const toggle = useMutation({ mutationFn: (task: Task) => put<Task>('/api/scheduled-tasks', { taskId: task.id, enabled: !task.enabled }), onSuccess: refresh });
  const remove = useMutation({ mutationFn: (task: Task) => del('/api/scheduled-tasks', { taskId: task.id }), onSuccess: refresh });
  return (
    <section className="card" aria-labelledby={`tasks-${agentId ?? 'all'}`}>
      <h2 id={`tasks-${agentId ?? 'all'}`}>Scheduled tasks</h2>
      {tasks.isPending ? (
        <Loading what="scheduled tasks" />
      ) : tasks.isError ? (
        <ErrorNote error={tasks.error} />
      ) : tasks.data.tasks.length === 0 ? (
        <p className="muted">No scheduled tasks yet: add one below to send this agent a prompt on a schedule.</p>
      ) : (
        <div className="table-wrap">
          <table>
            <caption className="muted">Prompts sent on a cron schedule (UTC)</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Schedule</th>
                <th scope="col">Next run</th>
                <th scope="col">Last run</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {tasks.data.tasks.map((task) => (
                <tr key={task.id}>
                  <td>
                    {task.name}
                    {!task.enabled && <span className="muted"> (paused)</span>}
                  </td>
                  <td>
                    <code>{task.cronSchedule}</code>
                  </td>
                  <td>{task.enabled ? when(task.nextRun) : '—'}</td>
                  <td>{when(task.lastRun)}</td>
                  <td className="row">
                    <Button
                      className="button secondary"
                      aria-label={`${task.enabled ? 'Pause' : 'Resume'} ${task.name}`}
                      busy={toggle.isPending && toggle.variables?.id === task.id}
                      onClick={() => toggle.mutate(task)}
                    >
                      {task.enabled ? 'Pause' : 'Resume'}
                    </Button>
                    <Button className="button danger" aria-label={`Delete ${task.name}`} busy={remove.isPending && remove.variables?.id === task.id} onClick={() => remove.mutate(task)}>
                      Delete
                    </Button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <ErrorNote error={toggle.error ?? remove.error} />
      {agentId && <NewTask agentId={agentId} onAdded={refresh} />}
    </section>
  );
}

function NewTask({ agentId, onAdded }: { agentId: string; onAdded: () => void }) {
  const [name, setName] = useState('');
  const [cron, setCron] = useState('0 9 * * *');
  const [prompt, setPrompt] = useState('');
  const add = useMutation({
    mutationFn: () => post<Task>('/api/scheduled-tasks', { name, cronSchedule: cron, prompt, agentId }),
    onSuccess: () => {
      setName('');
      setPrompt('');
      onAdded();
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    add.mutate();
  };
  return (
    <form onSubmit={submit} className="stack" aria-label="Add a scheduled task">
      <h3>Add a scheduled task</h3>
      <Field label="Task name" required maxLength={200} value={name} onChange={(e) => setName(e.target.value)} />
      <Field
        label="Cron schedule"
        required
        maxLength={200}
        value={cron}
        onChange={(e) => setCron(e.target.value)}
        hint="5 or 6 fields, UTC: minute hour day month weekday (e.g. 0 9 * * * is every day at 09:00)."
      />
      <div className="field">
        <label htmlFor={`prompt-${agentId}`}>Prompt</label>
        <textarea id={`prompt-${agentId}`} required maxLength={20_000} rows={3} value={prompt} onChange={(e) => setPrompt(e.target.value)} />
      </div>
      <ErrorNote error={add.error} />
      {add.isSuccess && (
        <Notice>
          Scheduled “{add.data.name}”: next run {when(add.data.nextRun)}.
        </Notice>
      )}
      <Button type="submit" busy={add.isPending} busyLabel="Adding…">
        Add task
      </Button>
    </form>
  );
}

/** The agent's heartbeat: a regular check-in prompt at a frequency. */
export function HeartbeatPanel({ agentId }: { agentId: string }) {
  const queries = useQueryClient();
  const key = ['heartbeat', agentId];
  const heartbeat = useQuery({ queryKey: key, queryFn: () => get<HeartbeatResponse>(`/api/heartbeat${query({ agentId })}`) });
  const [frequency, setFrequency] = useState<string | undefined>();
  const save = useMutation({
    mutationFn: (enabled: boolean) => post('/api/heartbeat', { agentId, enabled, ...(frequency ? { frequency } : {}) }),
    onSuccess: () => queries.invalidateQueries({ queryKey: key }),
  });
  const current = heartbeat.data?.heartbeat;
  return (
    <section className="card" aria-labelledby={`heartbeat-${agentId}`}>
      <h2 id={`heartbeat-${agentId}`}>Heartbeat</h2>
      {heartbeat.isPending ? (
        <Loading what="the heartbeat" />
      ) : heartbeat.isError ? (
        <ErrorNote error={heartbeat.error} />
      ) : (
        current && (
          <>
            <p>
              {current.enabled ? `On, every ${current.frequency}` : 'Off'} · last {when(current.lastHeartbeat)} · next {current.enabled ? when(current.nextHeartbeat) : '—'}
            </p>
            <div className="row">
              <Field
                label="Frequency"
                value={frequency ?? current.frequency}
                onChange={(e) => setFrequency(e.target.value.trim())}
                hint="A number and m, h or d (e.g. 30m, 6h, 1d)."
                pattern="[1-9][0-9]{0,4}[mhd]"
              />
              <Button busy={save.isPending} onClick={() => save.mutate(true)}>
                {current.enabled ? 'Save' : 'Turn on'}
              </Button>
              {current.enabled && (
                <Button className="button secondary" busy={save.isPending} onClick={() => save.mutate(false)}>
                  Turn off
                </Button>
              )}
            </div>
          </>
        )
      )}
      <ErrorNote error={save.error} />
    </section>
  );
}

export function SchedulesPage() {
  const agents = useAgents();
  return (
    <>
      <h1>Schedules</h1>
      <TaskPanel />
      {agents.data && agents.data.agents.length === 0 ? (
        <Empty title="No agents to schedule">
          <p>
            Tasks send prompts to an agent. <Link to="/agents/new">Provision an agent</Link> first.
          </p>
        </Empty>
      ) : (
        <p className="muted">
          To add a task, open one of your agents from the <Link to="/dashboard">dashboard</Link>.
        </p>
      )}
    </>
  );
}
