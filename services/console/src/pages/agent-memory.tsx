import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { del, get, put, query } from '../api.ts';
import { when } from '../format.ts';
import { bytes } from '../metrics.ts';
import type { Memory, MemoryNote, MemoryRemoved, MemorySaved } from '../types.ts';
import { Button, Confirm, ErrorNote, Loading, Notice, TextArea } from '../ui.tsx';
import { useAgent } from './agents.tsx';

/** What the agent remembers: MEMORY.md (in every turn's prompt) to edit, and its memory/*.md notes to read or delete. */
export function MemoryPage() {
  const agent = useAgent();
  const memory = useQuery({
    queryKey: ['memory', agent.id],
    queryFn: () => get<Memory>(`/api/memory${query({ agentId: agent.id })}`),
  });
  return (
    <>
      {memory.isPending ? (
        <Loading what="the agent's memory" />
      ) : memory.isError ? (
        <section className="card">
          <h2>Memory</h2>
          <ErrorNote error={memory.error} />
        </section>
      ) : (
        <>
          {/* Keyed by the read text: a fresh read starts the editor again from what the agent has. */}
          <MemoryEditor key={memory.data.memory} agentId={agent.id} saved={memory.data.memory} />
          <MemoryNotes agentId={agent.id} notes={memory.data.files} />
        </>
      )}
    </>
  );
}

function MemoryEditor({ agentId, saved }: { agentId: string; saved: string }) {
  const queries = useQueryClient();
  const [text, setText] = useState(saved);
  const save = useMutation({
    mutationFn: () => put<MemorySaved>('/api/memory', { agentId, content: text }),
    onSuccess: () => queries.invalidateQueries({ queryKey: ['memory', agentId] }),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    save.mutate();
  };
  return (
    <section className="card" aria-labelledby="memory-md">
      <h2 id="memory-md">MEMORY.md</h2>
      <form onSubmit={submit} className="stack">
        <TextArea
          label="MEMORY.md"
          rows={14}
          spellCheck={false}
          value={text}
          onChange={(e) => {
            setText(e.target.value);
            save.reset();
          }}
          hint="The agent reads this at the start of every turn; a change counts from its next turn."
        />
        <ErrorNote error={save.error} />
        {save.isSuccess && <Notice>Saved ({bytes(save.data.size)}).</Notice>}
        <div className="row">
          <Button type="submit" busy={save.isPending} busyLabel="Saving…" disabled={text === saved}>
            Save memory
          </Button>
          <Button
            className="button secondary"
            disabled={text === saved || save.isPending}
            onClick={() => setText(saved)}
          >
            Undo changes
          </Button>
        </div>
      </form>
    </section>
  );
}

function MemoryNotes({ agentId, notes }: { agentId: string; notes: Memory['files'] }) {
  const queries = useQueryClient();
  const [reading, setReading] = useState<string | undefined>();
  const [asking, setAsking] = useState<string | undefined>();
  const note = useQuery({
    queryKey: ['memory', agentId, reading],
    queryFn: () => get<MemoryNote>(`/api/memory${query({ agentId, path: reading })}`),
    enabled: reading !== undefined,
  });
  const remove = useMutation({
    mutationFn: (path: string) => del<MemoryRemoved>(`/api/memory${query({ agentId, path })}`),
    onSuccess: (result) => {
      setAsking(undefined);
      if (reading === result.path) setReading(undefined);
      return queries.invalidateQueries({ queryKey: ['memory', agentId] });
    },
  });
  return (
    <section className="card" aria-labelledby="memory-notes">
      <h2 id="memory-notes">Memory notes</h2>
      <p className="muted">
        The agent's own notes under <code>memory/</code>; it looks them up when it needs them.
      </p>
      {notes.length === 0 ? (
        <p className="muted">The agent has written no notes yet.</p>
      ) : (
        <div className="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Note</th>
                <th scope="col">Size</th>
                <th scope="col">Changed</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {notes.map((file) => (
                <tr key={file.path}>
                  <td>
                    <code>{file.path}</code>
                  </td>
                  <td>{bytes(file.size)}</td>
                  <td>{when(file.updatedAt)}</td>
                  <td>
                    <div className="row">
                      <Button
                        className="button secondary"
                        aria-label={`Read ${file.path}`}
                        onClick={() => setReading(file.path)}
                      >
                        Read
                      </Button>
                      <Button
                        className="button danger"
                        aria-label={`Delete ${file.path}`}
                        onClick={() => setAsking(file.path)}
                      >
                        Delete
                      </Button>
                    </div>
                    {asking === file.path && (
                      <Confirm
                        question={`Delete ${file.path}? The agent forgets what it holds.`}
                        confirmLabel="Delete note"
                        busy={remove.isPending}
                        onConfirm={() => remove.mutate(file.path)}
                        onCancel={() => setAsking(undefined)}
                      />
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <ErrorNote error={remove.error} />
      {reading !== undefined && (
        <div className="stack" aria-live="polite">
          <h3>{reading}</h3>
          {note.isPending ? (
            <Loading what={reading} />
          ) : note.isError ? (
            <ErrorNote error={note.error} />
          ) : (
            <pre className="note-text">{note.data.content}</pre>
          )}
          <Button className="button secondary" onClick={() => setReading(undefined)}>
            Close the note
          </Button>
        </div>
      )}
    </section>
  );
}
