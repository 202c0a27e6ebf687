import { useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useEffect, useRef, useState } from 'react';
import { get, query } from '../api.ts';
import { sendsOnEnter, streamTurn } from '../chat.ts';
import { when } from '../format.ts';
import type { ChatHistory } from '../types.ts';
import { Button, ErrorNote, Loading, TextArea, useScrollToEnd } from '../ui.tsx';
import { useAgent } from './agents.tsx';

/** A turn of this visit: the question, the answer as far as it has come, and how it ended. */
interface Turn {
  id: number;
  question: string;
  answer: string;
  state: 'answering' | 'done' | 'failed';
  error?: unknown;
}

function Message({
  who,
  text,
  at,
  answering,
}: {
  who: 'You' | 'Agent';
  text: string;
  at?: string | null;
  answering?: boolean;
}) {
  return (
    <li className={`message message-${who === 'You' ? 'user' : 'agent'}`}>
      <p className="message-who">
        {who}
        {at ? <span className="muted"> · {when(at)}</span> : null}
        {answering ? <span className="muted"> · answering…</span> : null}
      </p>
      <div className="message-text">{text}</div>
    </li>
  );
}

/** The web session's conversation with the agent: its history from the gateway, then this visit's turns, answers streamed as they come. */
export function ChatPage() {
  const agent = useAgent();
  const queries = useQueryClient();
  // Read on arrival and after each finished turn only: a read in the middle of a turn would show its question twice.
  const history = useQuery({
    queryKey: ['chat', agent.id],
    queryFn: () => get<ChatHistory>(`/api/chat${query({ agentId: agent.id, limit: 50 })}`),
    refetchOnWindowFocus: false,
    refetchOnReconnect: false,
  });
  const [turns, setTurns] = useState<Turn[]>([]);
  const [message, setMessage] = useState('');
  const running = useRef<AbortController | null>(null);
  const box = useRef<HTMLDivElement>(null);
  const answering = turns.some((turn) => turn.state === 'answering');
  // A turn still streaming when the page is left is stopped (the platform then ends the agent's run).
  useEffect(() => () => running.current?.abort(), []);
  useScrollToEnd(box, turns);

  const update = (id: number, change: Partial<Turn>) =>
    setTurns((all) => all.map((turn) => (turn.id === id ? { ...turn, ...change } : turn)));
  const send = (event: FormEvent) => {
    event.preventDefault();
    const question = message.trim();
    if (!question || answering) return;
    const id = Date.now();
    const controller = new AbortController();
    running.current = controller;
    setTurns((all) => [...all, { id, question, answer: '', state: 'answering' }]);
    setMessage('');
    streamTurn(agent.id, question, (soFar) => update(id, { answer: soFar }), controller.signal).then(
      async (reply) => {
        update(id, { answer: reply.message.content, state: 'done' });
        // The gateway's transcript now holds the turn: it is shown from there, once read.
        await queries.refetchQueries({ queryKey: ['chat', agent.id] });
        if (queries.getQueryState(['chat', agent.id])?.status === 'success')
          setTurns((all) => all.filter((turn) => turn.id !== id));
      },
      (error: unknown) => update(id, { state: 'failed', error }),
    );
  };

  const earlier = history.data?.messages.filter((m) => m.role === 'user' || m.role === 'assistant') ?? [];
  return (
    <section className="card" aria-labelledby="chat">
      <h2 id="chat">Chat</h2>
      <p className="muted">Your conversation with the agent in this console; it continues where you left it.</p>
      {history.isPending ? (
        <Loading what="the conversation" />
      ) : history.isError ? (
        <ErrorNote error={history.error} />
      ) : null}
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: the conversation scrolls, and the keyboard must reach it */}
      <div ref={box} className="conversation" role="log" aria-label="Conversation" aria-busy={answering} tabIndex={0}>
        {earlier.length === 0 && turns.length === 0 && history.isSuccess && (
          <p className="muted">No messages yet: say hello below.</p>
        )}
        <ol className="plain messages">
          {earlier.map((m, index) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: the gateway's messages have no id, and the history is read once in order
            <Message key={`h${index}`} who={m.role === 'user' ? 'You' : 'Agent'} text={m.content} at={m.createdAt} />
          ))}
          {turns.map((turn) => (
            <li key={turn.id} className="turn">
              <ol className="plain messages">
                <Message who="You" text={turn.question} />
                {(turn.answer || turn.state === 'answering') && (
                  <Message who="Agent" text={turn.answer} answering={turn.state === 'answering'} />
                )}
              </ol>
              {turn.state === 'failed' && <ErrorNote error={turn.error} />}
            </li>
          ))}
        </ol>
      </div>
      <form onSubmit={send} className="stack">
        <TextArea
          label="Message to the agent"
          hint="Enter sends; Shift+Enter starts a new line."
          required
          maxLength={32_000}
          rows={3}
          value={message}
          onChange={(e) => setMessage(e.target.value)}
          onKeyDown={(e) => {
            if (!sendsOnEnter({ key: e.key, shiftKey: e.shiftKey, isComposing: e.nativeEvent.isComposing })) return;
            e.preventDefault();
            e.currentTarget.form?.requestSubmit();
          }}
        />
        <div className="row">
          <Button type="submit" busy={answering} busyLabel="Answering…" disabled={!message.trim()}>
            Send
          </Button>
          {answering && (
            <Button className="button secondary" onClick={() => running.current?.abort()}>
              Stop
            </Button>
          )}
        </div>
      </form>
    </section>
  );
}
