import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { get, post, put } from '../api.ts';
import { ConfigBackupList, ConfigDocumentForm } from '../config-editor.tsx';
import type { Config, ConfigRestore, ConfigSave } from '../types.ts';
import { ErrorNote, Loading, Notice } from '../ui.tsx';

/** The user's defaults for new agents (OpenClaw's keys) with the last 10 backups: edit, check in place, save, restore. */
export function ConfigPage() {
  const queries = useQueryClient();
  const config = useQuery({ queryKey: ['config'], queryFn: () => get<Config>('/api/config') });
  const [text, setText] = useState<string | undefined>();
  const [restoring, setRestoring] = useState<string | undefined>();
  const save = useMutation({
    mutationFn: (value: Record<string, unknown>) => post<ConfigSave>('/api/config', { config: value }),
    onSuccess: (saved) => {
      queries.setQueryData(['config'], { config: saved.config, backups: saved.backups });
      setText(undefined);
    },
  });
  const restore = useMutation({
    mutationFn: (backupId: string) => put<ConfigRestore>('/api/config', { backupId }),
    onSuccess: (restored) => {
      queries.setQueryData(['config'], { config: restored.config, backups: restored.backups });
      setText(undefined);
      setRestoring(undefined);
    },
  });
  return (
    <>
      <h1>Configuration</h1>
      <p className="muted">
        Your defaults for new agents: each agent you create from now on starts with this configuration (its plan's tools
        profile aside). It changes no agent you already have: each agent's own configuration is on its Configuration
        page. Saving backs up the previous defaults; the last 10 can be restored.
      </p>
      {config.isPending ? (
        <Loading what="the configuration" />
      ) : config.isError ? (
        <ErrorNote error={config.error} />
      ) : (
        <>
          <ConfigDocumentForm
            id="config"
            config={config.data.config}
            draft={text}
            onDraft={setText}
            save={save}
            rows={18}
            hint="Checked as you type; the server checks it against OpenClaw's rules when you save."
            busyLabel="Saving…"
            notice={save.isSuccess && <Notice>Saved; the previous configuration is backed up.</Notice>}
          />
          <ConfigBackupList
            id="backups"
            heading="h2"
            backups={config.data.backups}
            empty="No backups yet: each save keeps the previous configuration here."
            restoring={restoring}
            onRestoring={setRestoring}
            restore={restore}
            notice={restore.isSuccess && <Notice>Restored.</Notice>}
          />
        </>
      )}
    </>
  );
}
