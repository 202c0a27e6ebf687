import type { Surface } from './route.ts';

/**
 * A rate-limit scope (docs/limits.md). A route takes it by naming it in its spec (`rateLimit`), or it is
 * surface-wide (`everyUrlUnder`); the edge counts a request against the scopes of the route the
 * router matched, never by reading the raw URL, so no spelling of a path escapes its route's limits.
 */
export interface RateLimitScope {
  name: string;
  surface: Surface;
  /**
   * Whose requests one counter holds: a client address; an agent (the SHA-256 of its bearer key,
   * once the service has accepted that key; an unknown key, or none, counts against its address);
   * or a signed-in user (session or user API key; by address when not signed in).
   */
  per: 'client-ip' | 'agent-key' | 'user';
  max: number;
  windowMs: number;
  /** The `{error}` of the 429. */
  message: string;
  /** Surface-wide: every route of the surface whose url is this or under it, and every unmatched url under it. */
  everyUrlUnder?: string;
  /** A family of routes: every spec of the surface under this url must name the scope (the catalog test checks; the edge reads the names). */
  namedUnder?: string;
  /** Routes (`METHOD /url`) this scope is for that the catalog does not hold yet: once one exists, its spec must name the scope. */
  awaitingRoutes?: readonly string[];
}

const MINUTE = 60_000;
const TOO_MANY = 'Too many requests';

/**
 * Every scope, most general first: when several hold for a request each counts it, the first one
 * spent answers the 429 (scopes per user are counted after the others, once the caller is known),
 * and the `RateLimit-*` headers describe the one nearest its limit (of equals, the most specific).
 * docs/limits.md says which numbers are the interface's own and why the others are what they are.
 */
export const RATE_LIMIT_SCOPES = [
  {
    name: 'backend-api',
    surface: 'backend',
    per: 'client-ip',
    max: 120,
    windowMs: MINUTE,
    message: 'Too many requests, please slow down.',
    everyUrlUnder: '/api',
  },
  {
    name: 'backend-ai',
    surface: 'backend',
    per: 'client-ip',
    max: 30,
    windowMs: MINUTE,
    message: 'AI rate limit exceeded.',
    namedUnder: '/api/ai',
  },
  {
    name: 'backend-deployments',
    surface: 'backend',
    per: 'client-ip',
    max: 5,
    windowMs: MINUTE,
    message: 'Deployment rate limit exceeded.',
  },
  { name: 'backend-bus-send', surface: 'backend', per: 'client-ip', max: 60, windowMs: MINUTE, message: TOO_MANY },
  {
    name: 'backend-agent-chat',
    surface: 'backend',
    per: 'agent-key',
    max: 120,
    windowMs: MINUTE,
    message: 'AI rate limit exceeded.',
  },
  { name: 'backend-agent-models', surface: 'backend', per: 'agent-key', max: 60, windowMs: MINUTE, message: TOO_MANY },
  {
    name: 'web-gateway',
    surface: 'web',
    per: 'client-ip',
    max: 100,
    windowMs: MINUTE,
    message: TOO_MANY,
    namedUnder: '/api/agents',
  },
  {
    name: 'web-chat',
    surface: 'web',
    per: 'client-ip',
    max: 60,
    windowMs: MINUTE,
    message: TOO_MANY,
    namedUnder: '/api/chat',
  },
  {
    name: 'web-instance',
    surface: 'web',
    per: 'client-ip',
    max: 30,
    windowMs: MINUTE,
    message: TOO_MANY,
    namedUnder: '/api/instance',
  },
  {
    name: 'web-provision',
    surface: 'web',
    per: 'client-ip',
    max: 5,
    windowMs: MINUTE,
    message: TOO_MANY,
    namedUnder: '/api/provision',
  },
  { name: 'web-register', surface: 'web', per: 'client-ip', max: 10, windowMs: 60 * MINUTE, message: TOO_MANY },
  { name: 'web-login', surface: 'web', per: 'client-ip', max: 20, windowMs: 15 * MINUTE, message: TOO_MANY },
  { name: 'web-wallet-nonce', surface: 'web', per: 'client-ip', max: 20, windowMs: MINUTE, message: TOO_MANY },
  { name: 'web-wallet-auth', surface: 'web', per: 'client-ip', max: 20, windowMs: 15 * MINUTE, message: TOO_MANY },
  { name: 'web-token-gate', surface: 'web', per: 'client-ip', max: 10, windowMs: MINUTE, message: TOO_MANY },
  { name: 'web-key-validate', surface: 'web', per: 'client-ip', max: 30, windowMs: MINUTE, message: TOO_MANY },
  { name: 'web-forgot-password', surface: 'web', per: 'client-ip', max: 5, windowMs: 15 * MINUTE, message: TOO_MANY },
  { name: 'web-reset-password', surface: 'web', per: 'client-ip', max: 10, windowMs: 15 * MINUTE, message: TOO_MANY },
  {
    name: 'web-resend-verification',
    surface: 'web',
    per: 'client-ip',
    max: 3,
    windowMs: 60 * MINUTE,
    message: TOO_MANY,
  },
  { name: 'web-demo-chat', surface: 'web', per: 'client-ip', max: 10, windowMs: MINUTE, message: TOO_MANY },
  {
    name: 'web-files',
    surface: 'web',
    per: 'client-ip',
    max: 60,
    windowMs: MINUTE,
    message: TOO_MANY,
    namedUnder: '/api/files',
  },
  { name: 'web-schedule-run', surface: 'web', per: 'client-ip', max: 10, windowMs: MINUTE, message: TOO_MANY },
  {
    name: 'web-control-ui',
    surface: 'web',
    per: 'client-ip',
    max: 600,
    windowMs: MINUTE,
    message: TOO_MANY,
    namedUnder: '/api/control-ui',
  },
  {
    name: 'web-password-change-ip',
    surface: 'web',
    per: 'client-ip',
    max: 20,
    windowMs: 15 * MINUTE,
    message: TOO_MANY,
  },
  { name: 'web-password-change', surface: 'web', per: 'user', max: 5, windowMs: 15 * MINUTE, message: TOO_MANY },
  { name: 'web-oauth', surface: 'web', per: 'client-ip', max: 40, windowMs: 15 * MINUTE, message: TOO_MANY },
  { name: 'web-farcaster-verify', surface: 'web', per: 'client-ip', max: 10, windowMs: MINUTE, message: TOO_MANY },
  {
    name: 'web-trader',
    surface: 'web',
    per: 'user',
    max: 30,
    windowMs: MINUTE,
    message: TOO_MANY,
    namedUnder: '/api/trader',
  },
  { name: 'web-billing-provider', surface: 'web', per: 'user', max: 20, windowMs: 15 * MINUTE, message: TOO_MANY },
  { name: 'web-agent-workspace', surface: 'web', per: 'user', max: 60, windowMs: MINUTE, message: TOO_MANY },
  {
    name: 'web-user-ai',
    surface: 'web',
    per: 'user',
    max: 120,
    windowMs: MINUTE,
    message: 'AI rate limit exceeded.',
    namedUnder: '/v1',
  },
  { name: 'web-agent-operations', surface: 'web', per: 'user', max: 30, windowMs: MINUTE, message: TOO_MANY },
  {
    name: 'web-mission-control',
    surface: 'web',
    per: 'user',
    max: 60,
    windowMs: MINUTE,
    message: TOO_MANY,
    namedUnder: '/api/mission-control',
  },
  {
    name: 'web-swarms',
    surface: 'web',
    per: 'user',
    max: 60,
    windowMs: MINUTE,
    message: TOO_MANY,
    namedUnder: '/api/swarms',
  },
  { name: 'web-swarm-runs', surface: 'web', per: 'user', max: 10, windowMs: MINUTE, message: TOO_MANY },
  {
    name: 'web-colony',
    surface: 'web',
    per: 'user',
    max: 30,
    windowMs: MINUTE,
    message: TOO_MANY,
    namedUnder: '/api/colony',
  },
  {
    name: 'web-installations',
    surface: 'web',
    per: 'user',
    max: 30,
    windowMs: MINUTE,
    message: TOO_MANY,
    namedUnder: '/api/installations',
  },
  { name: 'web-install-script', surface: 'web', per: 'client-ip', max: 30, windowMs: MINUTE, message: TOO_MANY },
  { name: 'web-summarizer', surface: 'web', per: 'user', max: 20, windowMs: MINUTE, message: TOO_MANY },
  {
    name: 'web-wallet',
    surface: 'web',
    per: 'user',
    max: 30,
    windowMs: MINUTE,
    message: TOO_MANY,
    namedUnder: '/api/wallet',
  },
] as const satisfies readonly RateLimitScope[];

export type RateLimitScopeName = (typeof RATE_LIMIT_SCOPES)[number]['name'];

/** The scopes a spec names, as a list. */
export function namedScopes(spec: {
  rateLimit?: RateLimitScopeName | readonly RateLimitScopeName[];
}): readonly RateLimitScopeName[] {
  if (spec.rateLimit === undefined) return [];
  return typeof spec.rateLimit === 'string' ? [spec.rateLimit] : spec.rateLimit;
}
