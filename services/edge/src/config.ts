import { Type } from 'typebox';
import { loadConfig, refuseExposedListeners, Secret } from '@agentyard/config';

export const edgeSettings = {
  EDGE_WEB_HOST: Type.String({ default: '127.0.0.1', description: 'web surface address' }),
  EDGE_WEB_PORT: Type.Integer({
    minimum: 0,
    maximum: 65535,
    default: 3000,
    description: 'web surface port ({base_url}/api)',
  }),
  EDGE_BACKEND_HOST: Type.String({ default: '127.0.0.1', description: 'backend surface address' }),
  EDGE_BACKEND_PORT: Type.Integer({
    minimum: 0,
    maximum: 65535,
    default: 3001,
    description: 'backend surface port ({backend_url})',
  }),
  EDGE_AGENT_HOST: Type.String({
    default: '',
    description:
      "address of a third listener serving only the backend routes that authenticate their own caller (agents' model traffic, bus sends), for agent containers that must not reach the host's loopback; empty: none",
  }),
  EDGE_AGENT_PORT: Type.Integer({
    minimum: 0,
    maximum: 65535,
    default: 3002,
    description: 'port of the agent listener (with EDGE_AGENT_HOST)',
  }),
  INTERNAL_API_KEY: Type.Optional(
    Secret({ description: 'bearer key of backend callers; unset answers 500 Server misconfigured' }),
  ),
  CSRF_TRUSTED_ORIGINS: Type.String({
    default: '',
    description: 'comma-separated origins allowed to make cookie-authenticated writes besides PUBLIC_BASE_URL',
  }),
  RATE_LIMITS: Type.String({
    default: '',
    description: 'overrides of rate-limit scopes, e.g. web-register=20,backend-api=600',
  }),
  EDGE_SERVICE_CONNECTIONS: Type.Integer({
    minimum: 1,
    default: 256,
    description: 'connections the edge keeps to each service for short requests (long-lived answers have their own)',
  }),
  EDGE_QUEUE_TIMEOUT_MS: Type.Integer({
    minimum: 1,
    default: 10_000,
    description: 'how long a request may wait for a free connection to its service before the edge answers 503',
  }),
  EDGE_STREAMS_PER_USER: Type.Integer({
    minimum: 1,
    default: 16,
    description:
      'long-lived answers (event streams, streamed chat, WebSockets) one caller may hold open at once on an edge process (429 TOO_MANY_STREAMS beyond)',
  }),
  EDGE_STREAMS_MAX: Type.Integer({
    minimum: 1,
    default: 512,
    description:
      'long-lived answers an edge process holds open at once, all callers together (429 STREAMS_FULL beyond)',
  }),
  EDGE_EXPOSED_LISTENERS: Type.String({
    default: '',
    description:
      'outside production, the listeners (web, backend, agent; comma-separated) allowed on a non-loopback address anyway; npm start names agent, whose listener agent containers reach on the host address',
  }),
  TRUST_PROXY: Type.String({
    default: '',
    description: 'addresses of a load balancer in front of the edge whose X-Forwarded-For is believed',
  }),
};

export function loadEdgeConfig(env?: Record<string, string | undefined>) {
  const config = loadConfig(edgeSettings, env ? { env, files: false } : {});
  const listeners = [
    { name: 'web', host: config.EDGE_WEB_HOST },
    { name: 'backend', host: config.EDGE_BACKEND_HOST },
    { name: 'agent', host: config.EDGE_AGENT_HOST },
  ];
  refuseExposedListeners(config.NODE_ENV, listeners, config.EDGE_EXPOSED_LISTENERS);
  return config;
}

export type EdgeConfig = ReturnType<typeof loadEdgeConfig>;
