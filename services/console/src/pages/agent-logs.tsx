import { useEffect, useRef, useState } from 'react';
import { get } from '../api.ts';
import { mergeLogLines, parseLogLine, plainText, streamErrorOf } from '../log-lines.ts';
import type { AgentLogLine, Logs } from '../types.ts';
import { ErrorNote, useScrollToEnd } from '../ui.tsx';
import { useAgent } from './agents.tsx';

type Following = 'connecting' | 'live' | 'ended';

/**
 * The agent's output: the live stream (GET /api/logs/:id/stream) is opened first, then the history
 * is read and merged under it, so no line written in between is missed.
 */
function useAgentLogs(agentId: string) {
  const [lines, setLines] = useState<AgentLogLine[]>([]);
  const [following, setFollowing] = useState<Following>('connecting');
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    setLines([]);
    setError(undefined);
    const source = new EventSource(`/api/logs/${agentId}/stream`);
    source.onopen = () => setFollowing('live');
    source.addEventListener('line', (message: MessageEvent<string>) => {
      const line = parseLogLine(message.data);
      if (line) setLines((kept) => mergeLogLines(kept, [line]));
    });
    // Both the engine breaking off (`event: error` with data) and a lost connection arrive here.
    source.addEventListener('error', (event) => {
      if (event instanceof MessageEvent && typeof event.data === 'string')
        setError(new Error(streamErrorOf(event.data)));
      setFollowing(source.readyState === EventSource.CLOSED ? 'ended' : 'connecting');
    });
    let current = true;
    get<Logs>(`/api/logs/${agentId}/history?lines=500`).then(
      (history) => {
        if (current) setLines((kept) => mergeLogLines(history.lines, kept));
      },
      (failure: unknown) => {
        if (current) setError(failure);
      },
    );
    return () => {
      current = false;
      source.close();
    };
  }, [agentId]);
  return { lines, following, error };
}

const FOLLOWING_WORDS: Record<Following, string> = {
  connecting: 'Connecting to the live output…',
  live: 'Showing new lines as the agent writes them',
  ended: 'The live output is not available; the lines above are what the agent wrote before',
};

export function LogsPage() {
  const agent = useAgent();
  const { lines, following, error } = useAgentLogs(agent.id);
  const [stick, setStick] = useState(true);
  const box = useRef<HTMLDivElement>(null);
  // New lines scroll into view while "follow" is on; reading older lines means turning it off.
  useScrollToEnd(box, lines, stick);
  return (
    <section className="card" aria-labelledby="logs">
      <h2 id="logs">Logs</h2>
      <div className="title-row">
        <p className={`live live-${following === 'live' ? 'live' : following}`} role="status">
          {FOLLOWING_WORDS[following]}
        </p>
        <div className="check">
          <input id="follow-logs" type="checkbox" checked={stick} onChange={(e) => setStick(e.target.checked)} />
          <label htmlFor="follow-logs">Scroll to new lines</label>
        </div>
      </div>
      <ErrorNote error={error} />
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: the log scrolls, and the keyboard must reach it */}
      <div ref={box} className="log-lines" role="log" aria-label="Agent output" tabIndex={0}>
        {lines.length === 0 ? (
          <p className="muted">No output yet.</p>
        ) : (
          <ol className="plain">
            {lines.map((line) => (
              <li
                key={`${line.time}|${line.stream}|${line.text}`}
                className={line.stream === 'stderr' ? 'log-line stderr' : 'log-line'}
              >
                <time dateTime={line.time}>{line.time.slice(11, 19)}</time>{' '}
                {line.stream === 'stderr' && <span className="log-stream">stderr </span>}
                {plainText(line.text)}
              </li>
            ))}
          </ol>
        )}
      </div>
      <p className="muted">{lines.length} lines; times in UTC; tokens and keys are shown as [redacted].</p>
    </section>
  );
}
