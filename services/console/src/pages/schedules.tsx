import { useInfiniteQuery, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useMemo, useState } from 'react';
import { Link } from 'react-router';
import { del, get, post, put, query } from '../api.ts';
import { usd, when } from '../format.ts';
import {
  formOf,
  heartbeatStatusWords,
  runStatusWords,
  type ScheduleForm,
  scheduleBody,
  scheduleWords,
  timeZoneChoices,
} from '../schedule-form.ts';
import type { HeartbeatResponse, HeartbeatRuns, RunStarted, Runs, Task, Tasks } from '../types.ts';
import { Button, Empty, ErrorNote, Field, Loading, Notice, Select } from '../ui.tsx';
import { useAgents } from './dashboard.tsx';

/** Scheduled prompts, of one agent or of all: add, edit every field, run now, pause, resume, delete, and each task's runs. */
export function TaskPanel({ agentId }: { agentId?: string }) {
  const queries = useQueryClient();
  const key = ['tasks', agentId ?? 'all'];
  const tasks = useQuery({
    queryKey: key,
    queryFn: () => get<Tasks>(`/api/scheduled-tasks${query({ agentId, limit: 100 })}`),
  });
  const refresh = () => queries.invalidateQueries({ queryKey: ['tasks'] });
  const [editing, setEditing] = useState<string | null>(null);
  const [showing, setShowing] = useState<string | null>(null);
  const toggle = useMutation({
    mutationFn: (task: Task) => put<Task>('/api/scheduled-tasks', { taskId: task.id, enabled: !task.enabled }),
    onSuccess: refresh,
  });
  const remove = useMutation({
    mutationFn: (task: Task) => del('/api/scheduled-tasks', { taskId: task.id }),
    onSuccess: refresh,
  });
  const runNow = useMutation({
    mutationFn: (task: Task) => post<RunStarted>(`/api/scheduled-tasks/${task.id}/run`),
    onSuccess: (_started, task) => {
      setShowing(task.id);
      refresh();
      queries.invalidateQueries({ queryKey: ['runs', task.id] });
    },
  });
  const editTask = tasks.data?.tasks.find((task) => task.id === editing);
  return (
    <section className="card" aria-labelledby={`tasks-${agentId ?? 'all'}`}>
      <h2 id={`tasks-${agentId ?? 'all'}`}>Scheduled tasks</h2>
      {tasks.isPending ? (
        <Loading what="scheduled tasks" />
      ) : tasks.isError ? (
        <ErrorNote error={tasks.error} />
      ) : tasks.data.tasks.length === 0 ? (
        <p className="muted">
          No scheduled tasks yet: add one below to send this agent a prompt on a schedule or once.
        </p>
      ) : (
        <div className="table-wrap">
          <table>
            <caption className="muted">Prompts sent on a cron schedule in a time zone, or once</caption>
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
                    {task.pausedReason && <p className="muted">{task.pausedReason}</p>}
                  </td>
                  <td>
                    <code>{scheduleWords(task)}</code>
                  </td>
                  <td>{task.enabled ? when(task.nextRun) : '—'}</td>
                  <td>
                    {when(task.lastRun)}
                    {task.lastStatus && <span className="muted"> · {runStatusWords(task.lastStatus)}</span>}
                    {task.lastError && <p className="muted">{task.lastError}</p>}
                  </td>
                  <td className="row">
                    <Button
                      className="button secondary"
                      aria-label={`Run now: ${task.name}`}
                      busy={runNow.isPending && runNow.variables?.id === task.id}
                      onClick={() => runNow.mutate(task)}
                    >
                      Run now
                    </Button>
                    <Button
                      className="button secondary"
                      aria-label={`Runs of ${task.name}`}
                      aria-expanded={showing === task.id}
                      onClick={() => setShowing(showing === task.id ? null : task.id)}
                    >
                      Runs
                    </Button>
                    <Button
                      className="button secondary"
                      aria-label={`Edit ${task.name}`}
                      onClick={() => setEditing(editing === task.id ? null : task.id)}
                    >
                      Edit
                    </Button>
                    <Button
                      className="button secondary"
                      aria-label={`${task.enabled ? 'Pause' : 'Resume'} ${task.name}`}
                      busy={toggle.isPending && toggle.variables?.id === task.id}
                      onClick={() => toggle.mutate(task)}
                    >
                      {task.enabled ? 'Pause' : 'Resume'}
                    </Button>
                    <Button
                      className="button danger"
                      aria-label={`Delete ${task.name}`}
                      busy={remove.isPending && remove.variables?.id === task.id}
                      onClick={() => remove.mutate(task)}
                    >
                      Delete
                    </Button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <ErrorNote error={toggle.error ?? remove.error ?? runNow.error} />
      {runNow.isSuccess && <Notice>Run of “{runNow.variables.name}” started.</Notice>}
      {showing && tasks.data?.tasks.some((task) => task.id === showing) && (
        <RunList task={tasks.data.tasks.find((task) => task.id === showing)!} />
      )}
      {editTask && (
        <TaskForm
          key={editTask.id}
          task={editTask}
          onSaved={() => {
            setEditing(null);
            refresh();
          }}
        />
      )}
      {agentId && <TaskForm agentId={agentId} onSaved={refresh} />}
    </section>
  );
}

/** A task's runs, newest first, page by page: status, answer, cost and error. */
function RunList({ task }: { task: Task }) {
  const runs = useInfiniteQuery({
    queryKey: ['runs', task.id],
    initialPageParam: undefined as string | undefined,
    queryFn: ({ pageParam }) =>
      get<Runs>(`/api/scheduled-tasks/${task.id}/runs${query({ limit: 20, cursor: pageParam })}`),
    getNextPageParam: (last) => last.nextCursor ?? undefined,
  });
  const rows = runs.data?.pages.flatMap((page) => page.runs) ?? [];
  return (
    <section aria-label={`Runs of ${task.name}`} className="stack">
      <h3>Runs of “{task.name}”</h3>
      {runs.isPending ? (
        <Loading what="runs" />
      ) : runs.isError ? (
        <ErrorNote error={runs.error} />
      ) : rows.length === 0 ? (
        <p className="muted">No runs yet.</p>
      ) : (
        <div className="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Due</th>
                <th scope="col">Status</th>
                <th scope="col">Answer</th>
                <th scope="col">Cost</th>
                <th scope="col">Error</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((run) => (
                <tr key={run.id}>
                  <td>
                    {when(run.dueAt)}
                    {run.manual && <span className="muted"> (run now)</span>}
                  </td>
                  <td>{runStatusWords(run.status)}</td>
                  <td>{run.reply ?? '—'}</td>
                  <td>
                    {run.costUsd === null ? '—' : usd(run.costUsd)}
                    {run.tokens !== null && <span className="muted"> · {run.tokens} tokens</span>}
                  </td>
                  <td>{run.error ?? '—'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <div className="row">
        <Button
          className="button secondary"
          busy={runs.isFetching}
          busyLabel="Refreshing…"
          onClick={() => runs.refetch()}
        >
          Refresh runs
        </Button>
        {runs.hasNextPage && (
          <Button className="button secondary" busy={runs.isFetchingNextPage} onClick={() => runs.fetchNextPage()}>
            Older runs
          </Button>
        )}
      </div>
    </section>
  );
}

/** Adds a task to `agentId`, or edits `task`: every field, a cron in a time zone or one time ("tomorrow at 9"). */
function TaskForm({ agentId, task, onSaved }: { agentId?: string; task?: Task; onSaved: () => void }) {
  const [form, setForm] = useState<ScheduleForm>(() => formOf(task));
  const set = <K extends keyof ScheduleForm>(field: K, value: ScheduleForm[K]) =>
    setForm((current) => ({ ...current, [field]: value }));
  const zones = useMemo(() => timeZoneChoices(form.timezone), [form.timezone]);
  const save = useMutation({
    mutationFn: () =>
      task
        ? put<Task>('/api/scheduled-tasks', { taskId: task.id, ...scheduleBody(form) })
        : post<Task>('/api/scheduled-tasks', { ...scheduleBody(form), agentId }),
    onSuccess: () => {
      if (!task) setForm((current) => ({ ...formOf(undefined, current.timezone), timezone: current.timezone }));
      onSaved();
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    save.mutate();
  };
  const id = task?.id ?? agentId;
  return (
    <form onSubmit={submit} className="stack" aria-label={task ? `Edit ${task.name}` : 'Add a scheduled task'}>
      <h3>{task ? `Edit “${task.name}”` : 'Add a scheduled task'}</h3>
      <Field
        label="Task name"
        required
        maxLength={200}
        value={form.name}
        onChange={(e) => set('name', e.target.value)}
      />
      <Select label="Runs" value={form.kind} onChange={(e) => set('kind', e.target.value as ScheduleForm['kind'])}>
        <option value="repeating">On a schedule</option>
        <option value="once">Once</option>
      </Select>
      {form.kind === 'repeating' ? (
        <Field
          label="Cron schedule"
          required
          maxLength={200}
          value={form.cronSchedule}
          onChange={(e) => set('cronSchedule', e.target.value)}
          hint="5 or 6 fields in the time zone below: minute hour day month weekday (e.g. 0 9 * * * is every day at 09:00)."
        />
      ) : (
        <Field
          label="Run at"
          type="datetime-local"
          required
          value={form.runAt}
          onChange={(e) => set('runAt', e.target.value)}
          hint="A time within the next year, in the time zone below."
        />
      )}
      <Select label="Time zone" value={form.timezone} onChange={(e) => set('timezone', e.target.value)}>
        {zones.map((zone) => (
          <option key={zone} value={zone}>
            {zone}
          </option>
        ))}
      </Select>
      <Select
        label="If a run is missed"
        value={form.missedRunPolicy}
        onChange={(e) => set('missedRunPolicy', e.target.value as ScheduleForm['missedRunPolicy'])}
      >
        <option value="skip">Skip it (recorded as missed)</option>
        <option value="run-once">Run it once when back</option>
      </Select>
      <Select
        label="If the previous run is still going"
        value={form.overlapPolicy}
        onChange={(e) => set('overlapPolicy', e.target.value as ScheduleForm['overlapPolicy'])}
      >
        <option value="skip">Skip this run</option>
        <option value="queue">Run it after the previous one</option>
      </Select>
      <div className="field">
        <label htmlFor={`prompt-${id}`}>Prompt</label>
        <textarea
          id={`prompt-${id}`}
          required
          maxLength={20_000}
          rows={3}
          value={form.prompt}
          onChange={(e) => set('prompt', e.target.value)}
        />
      </div>
      <Field
        label="Description (optional)"
        maxLength={4000}
        value={form.description}
        onChange={(e) => set('description', e.target.value)}
      />
      <ErrorNote error={save.error} />
      {save.isSuccess && !task && (
        <Notice>
          Scheduled “{save.data.name}”: next run {when(save.data.nextRun)}.
        </Notice>
      )}
      <Button type="submit" busy={save.isPending} busyLabel={task ? 'Saving…' : 'Adding…'}>
        {task ? 'Save task' : 'Add task'}
      </Button>
    </form>
  );
}

/** The agent's heartbeat: a regular check-in prompt at a frequency. */
export function HeartbeatPanel({ agentId }: { agentId: string }) {
  const queries = useQueryClient();
  const key = ['heartbeat', agentId];
  const heartbeat = useQuery({
    queryKey: key,
    queryFn: () => get<HeartbeatResponse>(`/api/heartbeat${query({ agentId })}`),
  });
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
              {current.enabled ? `On, every ${current.frequency}` : 'Off'} · last {when(current.lastHeartbeat)} · next{' '}
              {current.enabled ? when(current.nextHeartbeat) : '—'}
              {current.lastStatus && <span className="muted"> · {heartbeatStatusWords(current.lastStatus)}</span>}
            </p>
            {current.lastError && <Notice>{current.lastError}</Notice>}
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
      <HeartbeatRunList agentId={agentId} />
    </section>
  );
}

/** The heartbeat's latest runs: delivered, failed, or skipped and why. */
function HeartbeatRunList({ agentId }: { agentId: string }) {
  const runs = useQuery({
    queryKey: ['heartbeat-runs', agentId],
    queryFn: () => get<HeartbeatRuns>(`/api/heartbeat/runs${query({ agentId, limit: 10 })}`),
  });
  if (runs.isPending) return <Loading what="heartbeat runs" />;
  if (runs.isError) return <ErrorNote error={runs.error} />;
  if (runs.data.runs.length === 0) return <p className="muted">No heartbeat runs yet.</p>;
  return (
    <div className="table-wrap">
      <table aria-label="Heartbeat runs">
        <thead>
          <tr>
            <th scope="col">Due</th>
            <th scope="col">Status</th>
            <th scope="col">Why</th>
          </tr>
        </thead>
        <tbody>
          {runs.data.runs.map((run) => (
            <tr key={run.id}>
              <td>{when(run.dueAt)}</td>
              <td>{heartbeatStatusWords(run.status)}</td>
              <td>{run.error ?? '—'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function SchedulesPage() {
  const agents = useAgents();
  const queries = useQueryClient();
  const [agentId, setAgentId] = useState<string | undefined>();
  const list = agents.data?.agents ?? [];
  const chosen = agentId ?? list[0]?.id;
  return (
    <>
      <h1>Schedules</h1>
      <TaskPanel />
      {agents.data && list.length === 0 ? (
        <Empty title="No agents to schedule">
          <p>
            Tasks send prompts to an agent. <Link to="/agents/new">Provision an agent</Link> first.
          </p>
        </Empty>
      ) : (
        chosen && (
          <section className="card stack" aria-label="A new task">
            <Select label="Agent" value={chosen} onChange={(e) => setAgentId(e.target.value)}>
              {list.map((agent) => (
                <option key={agent.id} value={agent.id}>
                  {agent.name}
                </option>
              ))}
            </Select>
            <TaskForm
              key={chosen}
              agentId={chosen}
              onSaved={() => queries.invalidateQueries({ queryKey: ['tasks'] })}
            />
          </section>
        )
      )}
    </>
  );
}
