import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useNavigate } from 'react-router';
import { del, get, post } from '../api.ts';
import { when } from '../format.ts';
import { bytes } from '../metrics.ts';
import type {
  AgentCloned,
  AgentDetail,
  AgentRestored,
  AgentSnapshot,
  AgentSnapshots,
  SnapshotRemoved,
  SnapshotStarted,
} from '../types.ts';
import { Button, Confirm, ErrorNote, Field, Loading, Notice } from '../ui.tsx';
import { useAgent } from './agents.tsx';

const REASONS: Record<AgentSnapshot['reason'], string> = {
  manual: 'Taken by you',
  scheduled: 'Daily',
  'before-update': 'Before an update',
  'before-repair': 'Before a repair',
  'before-reset': 'Before a memory reset',
  'before-restore': 'Before a restore',
  import: 'Imported',
};

const snapshotsKey = (agentId: string) => ['snapshots', agentId];

/** The agent's snapshots: take one, restore (with confirmation), clone into a new agent, download, delete. */
export function SnapshotsPage() {
  const agent = useAgent();
  // A snapshot is taken by the worker in seconds: looked at again only while one is being taken.
  const snapshots = useQuery({
    queryKey: snapshotsKey(agent.id),
    queryFn: () => get<AgentSnapshots>(`/api/agents/${agent.id}/snapshots`),
    refetchInterval: (q) => (q.state.data?.snapshots.some((s) => s.status === 'pending') ? 2000 : false),
  });
  const changes = useSnapshotChanges(agent);
  const { take, restore, remove, clone } = changes;
  if (snapshots.isPending) return <Loading what="snapshots" />;
  const list = snapshots.data?.snapshots ?? [];
  return (
    <>
      <ErrorNote error={snapshots.error ?? take.error ?? restore.error ?? remove.error ?? clone.error} />
      {restore.isSuccess && <Notice>Restored. The state it replaced is kept as a snapshot “Before a restore”.</Notice>}
      <TakeSnapshot changes={changes} />
      <section className="card" aria-labelledby="snapshot-list">
        <h2 id="snapshot-list">Snapshots</h2>
        {snapshots.data && (
          <p className="muted">
            Your snapshots take {bytes(snapshots.data.quota.usedBytes)} of {bytes(snapshots.data.quota.quotaBytes)}.{' '}
            {snapshots.data.quota.scheduledKept > 0
              ? `One is taken every day; the newest ${snapshots.data.quota.scheduledKept} daily ones are kept.`
              : 'Your plan takes no daily snapshots.'}
          </p>
        )}
        {list.length === 0 ? (
          <p className="muted">No snapshot yet. One is also taken before every update, repair and memory reset.</p>
        ) : (
          <div className="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Taken</th>
                  <th scope="col">Label</th>
                  <th scope="col">Why</th>
                  <th scope="col">Size</th>
                  <th scope="col">State</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {list.map((snapshot) => (
                  <SnapshotRow key={snapshot.id} agent={agent} snapshot={snapshot} changes={changes} />
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
    </>
  );
}

/** What a row's button opened under it: a restore or delete to confirm, or the clone form. */
type Asking = { action: 'restore' | 'delete' | 'clone'; snapshotId: string };

/**
 * What the page changes: a snapshot taken, restored, deleted or cloned, and which row is asking
 * to confirm which (one at a time). Their errors show at the top of the page.
 */
function useSnapshotChanges(agent: AgentDetail) {
  const queries = useQueryClient();
  const navigate = useNavigate();
  const [label, setLabel] = useState('');
  // One state for all three: a second button pressed replaces the question open, never joins it.
  const [asking, setAsking] = useState<Asking | undefined>();
  const [cloneName, setCloneName] = useState('');
  const refresh = () => queries.invalidateQueries({ queryKey: snapshotsKey(agent.id) });
  // Done: its question closes, unless another was opened meanwhile.
  const answered = (action: Asking['action'], snapshot: AgentSnapshot) =>
    setAsking((open) => (open?.action === action && open.snapshotId === snapshot.id ? undefined : open));
  const take = useMutation({
    mutationFn: () =>
      post<SnapshotStarted>(`/api/agents/${agent.id}/snapshots`, label.trim() ? { label: label.trim() } : {}),
    onSuccess: () => {
      setLabel('');
      void refresh();
    },
  });
  const restore = useMutation({
    mutationFn: (snapshot: AgentSnapshot) =>
      post<AgentRestored>(`/api/agents/${agent.id}/restore`, { snapshotId: snapshot.id }),
    onSuccess: (_restored, snapshot) => {
      answered('restore', snapshot);
      void refresh();
      void queries.invalidateQueries({ queryKey: ['agent', agent.id] });
    },
  });
  const remove = useMutation({
    mutationFn: (snapshot: AgentSnapshot) => del<SnapshotRemoved>(`/api/agents/${agent.id}/snapshots/${snapshot.id}`),
    onSuccess: (_removed, snapshot) => {
      answered('delete', snapshot);
      void refresh();
    },
  });
  const clone = useMutation({
    mutationFn: (snapshot: AgentSnapshot) =>
      post<AgentCloned>(`/api/agents/${agent.id}/clone`, { snapshotId: snapshot.id, name: cloneName.trim() }),
    onSuccess: (result) => {
      void queries.invalidateQueries({ queryKey: ['agents'] });
      void navigate(`/agents/${result.agent.id}`);
    },
  });
  return {
    label,
    setLabel,
    cloneName,
    setCloneName,
    asking,
    setAsking,
    take,
    restore,
    remove,
    clone,
  };
}

type SnapshotChanges = ReturnType<typeof useSnapshotChanges>;

function TakeSnapshot({ changes: { label, setLabel, take } }: { changes: SnapshotChanges }) {
  return (
    <section className="card" aria-labelledby="take-snapshot">
      <h2 id="take-snapshot">Take a snapshot</h2>
      <p className="muted">
        Its memory, files and configuration, without any token or channel credential. The agent pauses for a moment
        while it is copied.
      </p>
      <form
        className="row"
        onSubmit={(event) => {
          event.preventDefault();
          take.mutate();
        }}
      >
        <Field
          label="Label (optional)"
          value={label}
          maxLength={100}
          onChange={(event) => setLabel(event.target.value)}
        />
        <Button type="submit" busy={take.isPending} busyLabel="Starting…">
          Take snapshot
        </Button>
      </form>
    </section>
  );
}

function SnapshotRow({
  agent,
  snapshot,
  changes,
}: {
  agent: AgentDetail;
  snapshot: AgentSnapshot;
  changes: SnapshotChanges;
}) {
  const name = snapshot.label ?? when(snapshot.createdAt);
  return (
    <tr>
      <td>{when(snapshot.createdAt)}</td>
      <td>{snapshot.label ?? '—'}</td>
      <td>{REASONS[snapshot.reason]}</td>
      <td>{snapshot.sizeBytes === null ? '—' : bytes(snapshot.sizeBytes)}</td>
      <td>{snapshot.status === 'ready' ? 'Ready' : snapshot.status === 'pending' ? 'Being taken…' : 'Failed'}</td>
      <td>
        <SnapshotActions agent={agent} snapshot={snapshot} name={name} changes={changes} />
      </td>
    </tr>
  );
}

/** A snapshot's buttons, and the confirmation or clone form the one pressed opens under them. */
function SnapshotActions({
  agent,
  snapshot,
  name,
  changes,
}: {
  agent: AgentDetail;
  snapshot: AgentSnapshot;
  name: string;
  changes: SnapshotChanges;
}) {
  const { asking, setAsking, restore, remove } = changes;
  const ask = (action: Asking['action']) => () => setAsking({ action, snapshotId: snapshot.id });
  const open = asking?.snapshotId === snapshot.id ? asking.action : undefined;
  return (
    <>
      {snapshot.status === 'ready' && (
        <div className="row">
          <Button aria-label={`Restore ${name}`} onClick={ask('restore')}>
            Restore
          </Button>
          <Button className="button secondary" aria-label={`Clone ${name}`} onClick={ask('clone')}>
            Clone
          </Button>
          <a
            className="button secondary"
            href={`/api/agents/${agent.id}/snapshots/${snapshot.id}/download`}
            download
            aria-label={`Download ${name}`}
          >
            Download
          </a>
        </div>
      )}
      <Button className="button danger" aria-label={`Delete ${name}`} onClick={ask('delete')}>
        Delete
      </Button>
      {open === 'restore' && (
        <Confirm
          question={`Restore ${agent.name} to ${name}? What it learned since is replaced (kept as a snapshot first), and it restarts.`}
          confirmLabel="Restore agent"
          busy={restore.isPending}
          onConfirm={() => restore.mutate(snapshot)}
          onCancel={() => setAsking(undefined)}
        />
      )}
      {open === 'delete' && (
        <Confirm
          question={`Delete the snapshot ${name}? It cannot be restored afterwards.`}
          confirmLabel="Delete snapshot"
          busy={remove.isPending}
          onConfirm={() => remove.mutate(snapshot)}
          onCancel={() => setAsking(undefined)}
        />
      )}
      {open === 'clone' && <CloneForm snapshot={snapshot} changes={changes} />}
    </>
  );
}

function CloneForm({ snapshot, changes }: { snapshot: AgentSnapshot; changes: SnapshotChanges }) {
  const { cloneName, setCloneName, setAsking, clone } = changes;
  return (
    <form
      className="row"
      onSubmit={(event) => {
        event.preventDefault();
        clone.mutate(snapshot);
      }}
    >
      <Field
        label="New agent's name"
        value={cloneName}
        required
        maxLength={64}
        onChange={(event) => setCloneName(event.target.value)}
      />
      <Button type="submit" busy={clone.isPending} busyLabel="Cloning…" disabled={!cloneName.trim()}>
        Create clone
      </Button>
      <Button className="button secondary" type="button" onClick={() => setAsking(undefined)}>
        Cancel
      </Button>
    </form>
  );
}
