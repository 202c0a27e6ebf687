import { createServer, type Server } from 'node:http';
import { collectProcessMetrics, registry } from './metrics.ts';
import { dependencyStates } from './readiness.ts';

/**
 * Default port of each process's operations listener (`/livez`, `/readyz`, `/metrics`): apart from
 * the public surfaces and the services' ports, so it is never routed through the edge.
 */
export const OPS_PORTS: Record<string, number> = {
  edge: 9100,
  auth: 9101,
  agents: 9102,
  ai: 9103,
  scheduler: 9104,
  bridge: 9105,
  trader: 9106,
  'auth-worker': 9111,
  'agents-worker': 9112,
  'ai-worker': 9113,
  'scheduler-worker': 9114,
  'bridge-worker': 9115,
  'trader-worker': 9116,
};

type Env = Record<string, string | undefined>;

/**
 * Where process `name` (`agents`, `agents-worker`, `edge`) serves its operations listener:
 * `<NAME>_OPS_PORT` (`AGENTS_WORKER_OPS_PORT`), else `OPS_PORT` (one process alone, or `0` for a
 * free port in tests), else its default; on `OPS_HOST` (loopback unless set).
 */
export function opsAddress(name: string, env: Env = process.env): { host: string; port: number } {
  const own = env[`${name.toUpperCase().replace(/[^A-Z0-9]/g, '_')}_OPS_PORT`];
  const port = own ?? env.OPS_PORT ?? String(OPS_PORTS[name] ?? 0);
  return { host: env.OPS_HOST || '127.0.0.1', port: Number(port) };
}

export interface OpsListener {
  port: number;
  /** Readiness answers 503 `draining` from now on (SIGTERM: load balancers stop sending first). */
  drain(): void;
  close(): Promise<void>;
}

const json = (body: unknown) => JSON.stringify(body);

/**
 * Liveness (the event loop answers), readiness (not draining, and every dependency this process
 * registered answers within the timeout; 503 naming the ones that failed) and Prometheus metrics.
 */
export async function startOpsListener(
  address: { host: string; port: number },
  options: { checkTimeoutMs?: number } = {},
): Promise<OpsListener> {
  collectProcessMetrics();
  let draining = false;
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?', 1)[0];
    const send = (status: number, type: string, body: string) => {
      response.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
      response.end(body);
    };
    if (request.method !== 'GET' && request.method !== 'HEAD')
      return send(405, 'application/json', json({ error: 'Method not allowed' }));
    if (path === '/livez') return send(200, 'application/json', json({ status: 'ok' }));
    if (path === '/readyz') {
      if (draining) return send(503, 'application/json', json({ status: 'draining' }));
      void dependencyStates(options.checkTimeoutMs).then((checks) => {
        const failed = Object.entries(checks)
          .filter(([, state]) => state !== 'ok')
          .map(([name]) => name);
        send(
          failed.length ? 503 : 200,
          'application/json',
          json(failed.length ? { status: 'unavailable', failed, checks } : { status: 'ok', checks }),
        );
      });
      return;
    }
    if (path === '/metrics') {
      void registry.metrics().then(
        (text) => send(200, registry.contentType, text),
        () => send(500, 'application/json', json({ error: 'metrics unavailable' })),
      );
      return;
    }
    send(404, 'application/json', json({ error: 'Not found' }));
  });
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(address.port, address.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = server.address();
  return {
    port: typeof bound === 'object' && bound ? bound.port : address.port,
    drain() {
      draining = true;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
