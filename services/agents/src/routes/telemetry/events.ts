import { agentWorkspaceRoutes as spec, fastifyRoute } from '@agentyard/proto-schemas';
import { eventStreams, KEEP_ALIVE_MS, type ServiceApp } from '@agentyard/http';
import type { AgentStatusEvents } from '../../domain/telemetry/status-events.ts';
import { AgentErrors } from '../../errors.ts';

export default async function eventRoutes(app: ServiceApp, { statusEvents }: { statusEvents: AgentStatusEvents }) {
  const openStream = eventStreams(app);
  app.route({
    ...fastifyRoute(spec.events),
    handler: async (request, reply) => {
      const userId = request.identity.userId;
      if (!userId) throw AgentErrors.userContextRequired();
      const stream = openStream(reply, { keepAliveMs: KEEP_ALIVE_MS, headers: { 'x-request-id': request.id } });
      // `ready` again after the service's LISTEN connection came back: changes meanwhile were lost, the client reads again.
      const unsubscribe = await statusEvents.subscribe(userId, {
        change: (event) => stream.send('agent-status', event),
        relisten: () => stream.send('ready', {}),
      });
      // Listening from here on: a client that waits for this knows no later change is missed.
      stream.send('ready', {});
      if (!stream.left.aborted)
        await new Promise((resolve) => stream.left.addEventListener('abort', resolve, { once: true }));
      unsubscribe();
      stream.end();
    },
  });
}
