import type { ServiceApp } from '@agentyard/http';
import type { Surface } from '@agentyard/proto-schemas';
import { EdgeErrors } from '../errors.ts';
import { FORWARDED_METHODS } from '../plugins/service-routes.ts';

/**
 * Unmatched urls land here rather than on the server's 404 handler, so the surface's hooks (limits,
 * body size, request id) see them too. On the web surface GET/HEAD of an unmatched url are the
 * console's (console.ts).
 */
export default async function unmatchedUrls(app: ServiceApp, { surface }: { surface: Surface }) {
  app.route({
    method: surface === 'web' ? FORWARDED_METHODS.filter((m) => m !== 'GET' && m !== 'HEAD') : FORWARDED_METHODS,
    url: '/*',
    config: { edgeLocal: true, unmatched: true },
    handler: async () => {
      throw EdgeErrors.notFound();
    },
  });
}
