import type { ServiceApp } from '@agentyard/http';
import { registry } from '@agentyard/observability';
import { resolveBackendCaller, type CallerContext } from '../plugins/caller.ts';

/** `GET /metrics` on the backend surface: the edge's own Prometheus metrics for a key holder (scrapers normally use the operations listener). */
export default async function edgeMetrics(app: ServiceApp, options: { callers: CallerContext }) {
  app.get('/metrics', { config: { edgeLocal: true } }, async (request, reply) => {
    resolveBackendCaller(request, options.callers, true);
    return reply.type(registry.contentType).send(await registry.metrics());
  });
}
