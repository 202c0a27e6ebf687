import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useId, useRef, useState } from 'react';
import { del, get, query } from '../api.ts';
import { when } from '../format.ts';
import { bytes } from '../metrics.ts';
import type { FileRemoved, Folder, FolderEntry, Uploaded } from '../types.ts';
import { uploadFile } from '../upload.ts';
import { Button, Confirm, ErrorNote, Loading, Notice } from '../ui.tsx';
import { useAgent } from './agents.tsx';

/** The folder above `path` ('' is the workspace itself). */
const parentOf = (path: string) => path.split('/').slice(0, -1).join('/');

/** The agent's workspace, a folder at a time (`uploads/` first): upload with progress, download, delete. */
export function FilesPage() {
  const agent = useAgent();
  const queries = useQueryClient();
  const [folder, setFolder] = useState<string | undefined>();
  const key = ['files', agent.id, folder ?? ''];
  // Without a path the API lists `uploads/`; the workspace itself is `.`.
  const listing = useQuery({
    queryKey: key,
    queryFn: () => get<Folder>(`/api/files${query({ agentId: agent.id, path: folder === '' ? '.' : folder })}`),
  });
  const shown = listing.data?.path ?? folder ?? '';
  const refresh = () => queries.invalidateQueries({ queryKey: ['files', agent.id] });
  return (
    <section className="card" aria-labelledby="files">
      <h2 id="files">Files</h2>
      <p className="muted">
        The agent's workspace. Files you upload go to the folder shown; the agent reads and writes here too.
      </p>
      <p>
        Folder: <code>{shown ? `${shown}/` : '(workspace)'}</code>{' '}
        {shown && (
          <Button className="button secondary" onClick={() => setFolder(parentOf(shown))}>
            Up one folder
          </Button>
        )}
      </p>
      <Upload agentId={agent.id} folder={shown} onUploaded={refresh} />
      {listing.isPending ? (
        <Loading what="the files" />
      ) : listing.isError ? (
        <ErrorNote error={listing.error} />
      ) : listing.data.entries.length === 0 ? (
        <p className="muted">This folder is empty.</p>
      ) : (
        <div className="table-wrap">
          <table>
            <caption className="muted">Folders first, then files</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Size</th>
                <th scope="col">Changed</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {listing.data.entries.map((entry) => (
                <FileRow key={entry.path} agentId={agent.id} entry={entry} onOpen={setFolder} onDeleted={refresh} />
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

function FileRow({
  agentId,
  entry,
  onOpen,
  onDeleted,
}: {
  agentId: string;
  entry: FolderEntry;
  onOpen: (path: string) => void;
  onDeleted: () => void;
}) {
  const [asking, setAsking] = useState(false);
  const remove = useMutation({
    mutationFn: () => del<FileRemoved>(`/api/files${query({ agentId, path: entry.path })}`),
    onSuccess: () => {
      setAsking(false);
      onDeleted();
    },
  });
  return (
    <tr>
      <td>
        {entry.type === 'directory' ? (
          <Button
            className="button link"
            aria-label={`Open the folder ${entry.name}`}
            onClick={() => onOpen(entry.path)}
          >
            {entry.name}/
          </Button>
        ) : (
          entry.name
        )}
      </td>
      <td>{entry.type === 'file' ? bytes(entry.size) : '—'}</td>
      <td>{when(entry.updatedAt)}</td>
      <td>
        <div className="row">
          {entry.type === 'file' && (
            <a
              className="button secondary"
              href={`/api/files${query({ agentId, path: entry.path, download: '1' })}`}
              download={entry.name}
              aria-label={`Download ${entry.name}`}
            >
              Download
            </a>
          )}
          <Button className="button danger" aria-label={`Delete ${entry.name}`} onClick={() => setAsking(true)}>
            Delete
          </Button>
        </div>
        {asking && (
          <Confirm
            question={`Delete ${entry.path}? The agent loses it too.`}
            confirmLabel="Delete file"
            busy={remove.isPending}
            onConfirm={() => remove.mutate()}
            onCancel={() => setAsking(false)}
          />
        )}
        <ErrorNote error={remove.error} />
      </td>
    </tr>
  );
}

function Upload({ agentId, folder, onUploaded }: { agentId: string; folder: string; onUploaded: () => void }) {
  const id = useId();
  const input = useRef<HTMLInputElement>(null);
  const [file, setFile] = useState<File | null>(null);
  const [share, setShare] = useState(0);
  const upload = useMutation({
    mutationFn: (chosen: File) =>
      uploadFile(agentId, folder ? `${folder}/${chosen.name}` : chosen.name, chosen, setShare),
    onMutate: () => setShare(0),
    onSuccess: () => {
      setFile(null);
      if (input.current) input.current.value = '';
      onUploaded();
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (file) upload.mutate(file);
  };
  const done = (result: Uploaded) =>
    `Uploaded ${result.path} (${bytes(result.size)}); the workspace holds ${bytes(result.usedBytes)} of ${bytes(result.limitBytes)}.`;
  return (
    <form onSubmit={submit} className="stack upload">
      <div className="field">
        <label htmlFor={id}>File to upload</label>
        <input
          id={id}
          ref={input}
          type="file"
          onChange={(e) => {
            setFile(e.target.files?.[0] ?? null);
            upload.reset();
          }}
        />
      </div>
      <div className="row">
        <Button type="submit" busy={upload.isPending} busyLabel="Uploading…" disabled={!file}>
          Upload
        </Button>
        {upload.isPending && (
          <>
            <label htmlFor={`${id}-progress`}>Upload progress</label>
            <progress id={`${id}-progress`} max={1} value={share}>
              {Math.round(share * 100)}%
            </progress>
            <span aria-hidden="true">{Math.round(share * 100)}%</span>
          </>
        )}
      </div>
      <ErrorNote error={upload.error} />
      {upload.isSuccess && <Notice>{done(upload.data)}</Notice>}
    </form>
  );
}
