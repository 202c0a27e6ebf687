import { useQuery } from '@tanstack/react-query';
import type { AgentEvents } from '@agentyard/proto-schemas';
import type { Static } from 'typebox';
import { get } from '../api.ts';
import { when } from '../format.ts';
import { ErrorNote, Loading } from '../ui.tsx';

type Events = Static<typeof AgentEvents>;
type Event = Events['events'][number];

const WORDS: Record<Event['kind'], string> = {
  exit: 'Exited',
  oom: 'Out of memory',
  health: 'Health',
  restarted: 'Restarted by the watchdog',
  'crash-loop': 'Crash loop: no more restarts',
  recycled: 'Recycled',
};

function describe(event: Event): string {
  const parts = [WORDS[event.kind]];
  if (event.exitCode !== null) parts.push(`code ${event.exitCode}`);
  if (event.expected) parts.push('(asked for)');
  if (event.detail) parts.push(`— ${event.detail}`);
  return parts.join(' ');
}

/**
 * What happened to the agent's container (exits, out-of-memory kills) and what the watchdog did,
 * newest first; read again whenever the agent's status changes (the page's live status events).
 */
export function AgentEventsPanel({ agentId, status }: { agentId: string; status: string }) {
  const events = useQuery({
    queryKey: ['agent-events', agentId, status],
    queryFn: () => get<Events>(`/api/agents/${agentId}/events?limit=20`),
  });
  return (
    <section className="card" aria-labelledby="container-events">
      <h2 id="container-events">Container events</h2>
      {events.isPending && <Loading what="events" />}
      <ErrorNote error={events.error} />
      {events.data && events.data.events.length === 0 && <p>Nothing has happened to its container yet.</p>}
      {events.data && events.data.events.length > 0 && (
        <ul className="events">
          {events.data.events.map((event) => (
            <li key={event.id}>
              <time dateTime={event.at}>{when(event.at)}</time> {describe(event)}
              {event.logTail.length > 0 && (
                <details>
                  <summary>Its last {event.logTail.length} lines of output</summary>
                  <pre>{event.logTail.join('\n')}</pre>
                </details>
              )}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
