import { catalog, type Method, type RouteSpec, type ServiceName, type Surface } from '@agentyard/proto-schemas';

export interface ServiceRoutes {
  service: ServiceName;
  urls: string[];
  /** Urls on the backend surface that need no internal API key. */
  keyless: Set<string>;
  /** Urls whose `Authorization` header goes on to the service. */
  bearerForwarded: Set<string>;
  /** Urls whose named cookies go on to the service (all others are stripped). */
  cookiesForwarded: Map<string, ReadonlySet<string>>;
  /** Urls that also take WebSocket upgrades. */
  websocket: Set<string>;
  /** Urls whose exchange (on those methods) may stay open as long as the client likes: the route spec's `longLived`, and streamed bodies. */
  longLived: Map<string, Set<string>>;
  /** Urls whose body (on those methods) is relayed as it arrives, up to `maxBytes`, rather than read whole. */
  streamed: Map<string, { methods: Method[]; maxBytes: number }>;
}

/** The routes each service answers on a surface, derived from the catalog (one place). */
export function routingTable(surface: Surface, routes: RouteSpec[] = catalog): ServiceRoutes[] {
  const byService = new Map<ServiceName, ServiceRoutes>();
  for (const spec of routes) {
    if (!spec.surfaces.includes(surface)) continue;
    let entry = byService.get(spec.service);
    if (!entry)
      byService.set(
        spec.service,
        (entry = {
          service: spec.service,
          urls: [],
          keyless: new Set(),
          bearerForwarded: new Set(),
          cookiesForwarded: new Map(),
          websocket: new Set(),
          streamed: new Map(),
          longLived: new Map(),
        }),
      );
    if (!entry.urls.includes(spec.url)) entry.urls.push(spec.url);
    if (spec.backendKey === false) entry.keyless.add(spec.url);
    // On the web surface the edge checks a user's own key itself: it reaches no service.
    if (spec.forwardAuthorization && surface === 'backend') entry.bearerForwarded.add(spec.url);
    if (spec.forwardCookies?.length)
      entry.cookiesForwarded.set(
        spec.url,
        new Set([...(entry.cookiesForwarded.get(spec.url) ?? []), ...spec.forwardCookies]),
      );
    if (spec.websocket) entry.websocket.add(spec.url);
    // A HEAD is served by the GET route (it holds as long), and an upload relayed as it arrives holds its connection as long as the client sends.
    if (spec.longLived || spec.streamedBody) {
      const methods = [spec.method].flat();
      entry.longLived.set(
        spec.url,
        new Set([...(entry.longLived.get(spec.url) ?? []), ...methods, ...(methods.includes('GET') ? ['HEAD'] : [])]),
      );
    }
    if (spec.streamedBody)
      entry.streamed.set(spec.url, { methods: [spec.method].flat(), maxBytes: spec.streamedBody.maxBytes });
  }
  return [...byService.values()];
}

/** What agent containers may call (the edge's agent listener): backend routes that authenticate their caller themselves. */
export function agentRoutes(routes: RouteSpec[] = catalog): RouteSpec[] {
  return routes.filter((spec) => spec.surfaces.includes('backend') && spec.backendKey === false);
}
