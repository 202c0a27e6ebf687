import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { AgentChannels, ChannelConnected, ChannelDisconnected } from '@agentyard/proto-schemas';
import type { Static } from 'typebox';
import { type FormEvent, useEffect, useState } from 'react';
import { del, get, put } from '../api.ts';
import { Button, Confirm, ErrorNote, Field, Loading, Notice, Select } from '../ui.tsx';
import { useAgent } from './agents.tsx';

type Channels = Static<typeof AgentChannels>;
type Channel = Channels['channels'][number];

const STATUS_WORDS: Record<Channel['status'], string> = {
  connected: 'Connected',
  connecting: 'Connecting…',
  error: 'Error',
  off: 'Off',
};
const TONES: Record<Channel['status'], string> = { connected: 'ok', connecting: 'busy', error: 'bad', off: 'off' };

/** What the platform cannot connect with this agent image, said rather than offered (docs/agent-runtime.md, "Channels"). */
const NOT_HERE = [
  [
    'Discord, Matrix, Microsoft Teams',
    "need OpenClaw's own plugins (@openclaw/discord, @openclaw/matrix, @openclaw/msteams), which the agent image does not include yet",
  ],
  ['Slack, WhatsApp', 'need OpenClaw plugins that cannot be installed here'],
] as const;

/**
 * The agent's messaging channels: connect a Telegram bot with its token (kept sealed by the
 * platform, never shown again: only its last four characters), its live status from the agent's
 * gateway, and disconnect. Looked at again every few seconds while a channel is connecting.
 */
export function ChannelsPage() {
  const agent = useAgent();
  const queries = useQueryClient();
  const key = ['channels', agent.id];
  const channels = useQuery({
    queryKey: key,
    queryFn: () => get<Channels>(`/api/agents/${agent.id}/channels`),
    refetchInterval: (q) => (q.state.data?.channels.some((c) => c.status === 'connecting') ? 3000 : false),
  });
  const telegram = channels.data?.channels.find((c) => c.channel === 'telegram');
  const [token, setToken] = useState('');
  const [dmPolicy, setDmPolicy] = useState<'pairing' | 'allowlist' | 'open' | 'disabled'>('pairing');
  const [allowFrom, setAllowFrom] = useState('');
  const [disconnecting, setDisconnecting] = useState(false);
  // The form starts from the saved settings, so saving a new token keeps who may write.
  const savedPolicy = telegram?.dmPolicy;
  const savedSenders = telegram?.allowFrom?.join(', ');
  useEffect(() => {
    if (savedPolicy) setDmPolicy(savedPolicy);
    setAllowFrom(savedSenders ?? '');
  }, [savedPolicy, savedSenders]);
  const refresh = () => queries.invalidateQueries({ queryKey: key });
  const connect = useMutation({
    mutationFn: () => {
      const senders = allowFrom
        .split(/[\s,]+/)
        .map((s) => s.trim())
        .filter(Boolean);
      return put<Static<typeof ChannelConnected>>(`/api/agents/${agent.id}/channels/telegram`, {
        ...(token.trim() ? { botToken: token.trim() } : {}),
        dmPolicy,
        ...(senders.length > 0 ? { allowFrom: senders } : {}),
      });
    },
    onSuccess: () => {
      setToken('');
      void refresh();
    },
  });
  const disconnect = useMutation({
    mutationFn: () => del<Static<typeof ChannelDisconnected>>(`/api/agents/${agent.id}/channels/telegram`),
    onSuccess: () => {
      setDisconnecting(false);
      void refresh();
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    connect.mutate();
  };
  if (channels.isPending) return <Loading what="channels" />;
  return (
    <>
      <ErrorNote error={channels.error ?? connect.error ?? disconnect.error} />
      {connect.isSuccess && (
        <Notice>Saved. The agent restarts with the channel; it connects within a minute or two.</Notice>
      )}
      {disconnect.isSuccess && (
        <Notice>Disconnected. The bot token is deleted and the agent restarts without the channel.</Notice>
      )}
      <section className="card" aria-labelledby="telegram">
        <h2 id="telegram">Telegram</h2>
        {telegram ? (
          <dl className="facts">
            <dt>Status</dt>
            <dd>
              <span className={`badge badge-${TONES[telegram.status]}`}>{STATUS_WORDS[telegram.status]}</span>{' '}
              {telegram.detail}
            </dd>
            <dt>Bot token</dt>
            <dd>…{telegram.credentialHint}</dd>
            <dt>Who may write to it</dt>
            <dd>
              {telegram.dmPolicy ?? 'pairing'}
              {telegram.allowFrom?.length ? `: ${telegram.allowFrom.join(', ')}` : ''}
            </dd>
          </dl>
        ) : (
          <p>Not connected. Create a bot with Telegram's @BotFather and paste the token it gives you.</p>
        )}
        <form onSubmit={submit} className="stack">
          <Field
            label={telegram ? 'New bot token (leave empty to keep the current one)' : 'Bot token'}
            type="password"
            autoComplete="off"
            required={!telegram}
            maxLength={256}
            value={token}
            onChange={(e) => setToken(e.target.value)}
            hint="Kept sealed by the platform and given to the agent as a file; never shown again."
          />
          <Select
            label="Direct messages"
            value={dmPolicy}
            onChange={(e) => setDmPolicy(e.target.value as typeof dmPolicy)}
          >
            <option value="pairing">Pairing: a new sender gets a code to approve</option>
            <option value="allowlist">Only the Telegram user ids listed below</option>
            <option value="open">Anyone (list * below)</option>
            <option value="disabled">Nobody</option>
          </Select>
          <Field
            label="Allowed Telegram user ids (comma separated)"
            value={allowFrom}
            onChange={(e) => setAllowFrom(e.target.value)}
            maxLength={2000}
          />
          <Button type="submit" busy={connect.isPending} busyLabel="Saving…">
            {telegram ? 'Save' : 'Connect Telegram'}
          </Button>
        </form>
        {telegram &&
          (disconnecting ? (
            <Confirm
              question="Disconnect Telegram? The bot token is deleted."
              confirmLabel="Disconnect"
              busy={disconnect.isPending}
              onConfirm={() => disconnect.mutate()}
              onCancel={() => setDisconnecting(false)}
            />
          ) : (
            <Button className="button secondary" onClick={() => setDisconnecting(true)}>
              Disconnect Telegram
            </Button>
          ))}
      </section>
      <section className="card" aria-labelledby="other-channels">
        <h2 id="other-channels">Other channels</h2>
        <ul>
          {NOT_HERE.map(([names, why]) => (
            <li key={names}>
              <strong>{names}</strong> {why}.
            </li>
          ))}
        </ul>
      </section>
    </>
  );
}
