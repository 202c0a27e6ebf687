import type { ServiceName } from '@agentyard/proto-schemas';

/** Every service behind the edge and the loopback port it listens on by default. */
export const SERVICE_PORTS = {
  auth: 4101,
  agents: 4102,
  ai: 4103,
  scheduler: 4104,
  bridge: 4105,
  trader: 4106,
} as const satisfies Record<ServiceName, number>;

export const SERVICE_NAMES = Object.keys(SERVICE_PORTS) as ServiceName[];

type Env = Record<string, string | undefined>;

/** Where a service binds: `<NAME>_HOST` (loopback by default) and `<NAME>_PORT`. */
export function serviceListenAddress(name: ServiceName, env: Env = process.env): { host: string; port: number } {
  const upper = name.toUpperCase();
  return {
    host: env[`${upper}_HOST`] || '127.0.0.1',
    port: Number(env[`${upper}_PORT`] || SERVICE_PORTS[name]),
  };
}

/** Where the edge (or another service) reaches a service: `<NAME>_URL`, else its listen address. */
export function serviceUrl(name: ServiceName, env: Env = process.env): string {
  const explicit = env[`${name.toUpperCase()}_URL`];
  if (explicit) return explicit.replace(/\/$/, '');
  const { host, port } = serviceListenAddress(name, env);
  return `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`;
}
