import { Type, type TSchema } from 'typebox';
import { UserContextHeaders } from './common.ts';
import type { RateLimitScopeName } from './rate-limits.ts';

export type Surface = 'web' | 'backend';
export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
export type RouteAuth = 'none' | 'user' | 'admin' | 'service' | 'user-or-service';
export type ServiceName = 'auth' | 'agents' | 'ai' | 'scheduler' | 'bridge' | 'trader';

export interface RouteSchema {
  body?: TSchema;
  querystring?: TSchema;
  params?: TSchema;
  headers?: TSchema;
  response: Record<number, TSchema>;
}

/**
 * The 400 messages the interface gives a route's schema violations, where it names them; any other
 * violation is described field by field. The first that applies wins, in this order.
 */
export interface BadRequestMessages {
  /** Every violation, whatever it is. */
  all?: string;
  /** A missing required field, by name (`*`: any). */
  missing?: Record<string, string>;
  /** A present but invalid top-level field, by name. */
  invalid?: Record<string, string>;
  /** Any other violation of the body, and a body that cannot be read as JSON. */
  body?: string;
}

/**
 * One route of the interface: who serves it, on which surfaces, who may call it, and its shapes.
 * Services register handlers on these, the edge routes by them and publishes them as OpenAPI,
 * tests walk them. `backendKey: false` lets a backend-surface call through the edge without the
 * internal API key (the service authenticates it another way, or it is public).
 */
export interface RouteSpec<S extends RouteSchema = RouteSchema> {
  method: Method | Method[];
  url: string;
  service: ServiceName;
  surfaces: Surface[];
  auth: RouteAuth;
  backendKey?: boolean;
  /** The service authenticates the caller's own `Authorization` bearer (the edge passes it on). */
  forwardAuthorization?: boolean;
  /** Cookies (by name) the edge passes on to the service for this route; every other cookie stays stripped. */
  forwardCookies?: string[];
  websocket?: boolean;
  /**
   * The answer may stay open as long as the client likes (Server-Sent Events, a streamed chat turn):
   * the edge relays it over connections of its own, apart from short requests, and caps how many
   * each caller and the process hold open (docs/limits.md). A `websocket` route's upgrades are so too.
   */
  longLived?: boolean;
  /**
   * The body is relayed as it arrives rather than read whole (uploads): the edge streams it to the
   * service with backpressure and refuses it (413) once it passes `maxBytes`, its hard ceiling in
   * place of BODY_LIMIT_BYTES; the service enforces its own, finer limits.
   */
  streamedBody?: { maxBytes: number };
  /** The rate-limit scopes of this route (rate-limits.ts), each on its own surface; surface-wide ones apply without being named. */
  rateLimit?: RateLimitScopeName | readonly RateLimitScopeName[];
  /** Its 400 messages for schema violations, where the interface names them. */
  badRequest?: BadRequestMessages;
  summary: string;
  schema: S;
}

/**
 * A route spec as the catalog holds it. A backend route reached with the internal API key gets the
 * caller's user context (`x-user-id`, `x-user-email`) as declared headers, so a malformed one is a
 * 400 from validation; the route's own header schema, where it has one, adds to them or overrides.
 */
export function route<const S extends RouteSchema>(spec: RouteSpec<S>): RouteSpec<S> {
  if (!spec.surfaces.includes('backend') || spec.backendKey === false) return spec;
  const own = (spec.schema.headers as { properties?: Record<string, TSchema> } | undefined)?.properties ?? {};
  const headers = Type.Object({ ...UserContextHeaders.properties, ...own });
  return { ...spec, schema: { ...spec.schema, headers } };
}

/** What Fastify's `app.route()` needs from a spec (the handler is the service's). */
export function fastifyRoute<S extends RouteSchema>(spec: RouteSpec<S>) {
  return {
    method: spec.method,
    url: spec.url,
    schema: spec.schema,
    config: { auth: spec.auth, badRequest: spec.badRequest },
  } as const;
}
