import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { applyToDetail, applyToList, parseAgentEvent } from './events.ts';

export type LiveState = 'connecting' | 'live' | 'unavailable';

/**
 * Follows the signed-in user's agent status changes from GET /api/events while mounted: each event
 * updates the cached agent list and agent pages at once. No polling: when the stream is not there,
 * the state says so and the pages show what they last read.
 */
export function useAgentEvents(): LiveState {
  const queries = useQueryClient();
  const [state, setState] = useState<LiveState>('connecting');
  useEffect(() => {
    const source = new EventSource('/api/events');
    source.onopen = () => setState('live');
    // EventSource reconnects by itself after a dropped connection; CLOSED means the server refused it.
    source.onerror = () => setState(source.readyState === EventSource.CLOSED ? 'unavailable' : 'connecting');
    const onStatus = (message: MessageEvent<string>) => {
      const event = parseAgentEvent(message.data);
      if (!event) return;
      queries.setQueryData(['agents'], (list: Parameters<typeof applyToList>[0]) => applyToList(list, event));
      queries.setQueryData(['agent', event.agentId], (detail: Parameters<typeof applyToDetail>[0]) =>
        applyToDetail(detail, event),
      );
      // How an operation asked for on the web ended: the agent's page shows it.
      if (event.action) {
        queries.setQueryData(['agent-action', event.agentId], event);
        // Its end may change more than the status (an update: the image it runs), read again.
        void queries.invalidateQueries({ queryKey: ['agent', event.agentId] });
      }
      // Counts and limits follow from statuses.
      void queries.invalidateQueries({ queryKey: ['dashboard-stats'] });
    };
    source.addEventListener('agent-status', onStatus);
    // Sent on every (re)connect: a change made while the stream was down is read again, not lost.
    source.addEventListener('ready', () => {
      void queries.invalidateQueries({ queryKey: ['agents'] });
      void queries.invalidateQueries({ queryKey: ['agent'] });
    });
    return () => source.close();
  }, [queries]);
  return state;
}
