import type { ServiceApp } from '@agentyard/http';
import { fastifyRoute, gatewayRoutingRoutes as spec } from '@agentyard/proto-schemas';
import { fetchPage, pageFetchOptions } from '../domain/summarizer/page-fetch.ts';
import { extractParts, readPage } from '../domain/summarizer/page-reading.ts';
import { summarizePage } from '../domain/summarizer/page-summary.ts';
import { checkQuota } from '../domain/privileged/token-quota.ts';
import type { AiRouteOptions } from './privileged/ai.ts';
import { webCallerOf } from './web-caller.ts';

/** The summarizer: a public page read through the guarded fetcher, parsed, and on request summarized by the AI gateway. */
export default async function summarizerRoutes(app: ServiceApp, { config, system, gateway, lookups }: AiRouteOptions) {
  const fetching = pageFetchOptions(config);

  app.route({
    ...fastifyRoute(spec.summarize),
    handler: async (request) => {
      // The plan is checked before the page is fetched: a summary the caller cannot pay for costs no fetch.
      const paid = request.body.summary ? await webCallerOf(request, lookups) : null;
      const page = await fetchPage(request.body.url, fetching);
      const text = readPage(page.html);
      const answer = { url: page.url, ...text, fetchedAt: page.fetchedAt };
      if (!paid) return answer;
      await checkQuota(config, system, paid.access, paid.caller.userRef, request.identity.admin);
      return { ...answer, ...(await summarizePage(gateway, paid.access, paid.caller, text)) };
    },
  });

  app.route({
    ...fastifyRoute(spec.extract),
    handler: async (request) => {
      const page = await fetchPage(request.body.url, fetching);
      return { url: page.url, ...extractParts(page.html, page.url), fetchedAt: page.fetchedAt };
    },
  });
}
