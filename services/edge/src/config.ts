import { Type } from 'typebox';
import { loadConfig, Secret } from '@agentyard/config';

export const edgeSettings = {
  EDGE_WEB_HOST: Type.String({ default: '127.0.0.1', description: 'web surface address' }),
  EDGE_WEB_PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 3000, description: 'web surface port ({base_url}/api)' }),
  EDGE_BACKEND_HOST: Type.String({ default: '127.0.0.1', description: 'backend surface address' }),
  EDGE_BACKEND_PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 3001, description: 'backend surface port ({backend_url})' }),
  EDGE_AGENT_HOST: Type.String({
    default: '',
    description:
      "address of a third listener serving only the backend routes that authenticate their own caller (agents' model traffic, bus sends), for agent containers that must not reach the host's loopback; empty: none",
  }),
  EDGE_AGENT_PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 3002, description: 'port of the agent listener (with EDGE_AGENT_HOST)' }),
  INTERNAL_API_KEY: Type.Optional(Secret({ description: 'bearer key of backend callers; unset answers 500 Server misconfigured' })),
  CSRF_TRUSTED_ORIGINS: Type.String({ default: '', description: 'comma-separated origins allowed to make cookie-authenticated writes besides PUBLIC_BASE_URL' }),
  RATE_LIMITS: Type.String({ default: '', description: 'overrides of rate-limit scopes, e.g. web-register=20,backend-api=600' }),
  TRUST_PROXY: Type.String({ default: '', description: 'addresses of a load balancer in front of the edge whose X-Forwarded-For is believed' }),
};

export function loadEdgeConfig(env?: Record<string, string | undefined>) {
  return loadConfig(edgeSettings, env ? { env, files: false } : {});
}

export type EdgeConfig = ReturnType<typeof loadEdgeConfig>;
