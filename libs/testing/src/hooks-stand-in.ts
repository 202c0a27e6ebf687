import { randomUUID } from 'node:crypto';
import { EventEmitter, once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One scheduled prompt as an agent's hooks took it. */
export interface HookDelivery {
  /** The scheduled task, from the prompt's session key `scheduled:<taskId>`. */
  taskId: string;
  /** When the request arrived (ms since the epoch). */
  at: number;
}

export interface HooksStandIn {
  url: string;
  /** Every scheduled prompt taken, in arrival order. */
  deliveries: HookDelivery[];
  /** Requests refused for a wrong bearer token. */
  unauthorized: number;
  /** Resolves once `count` prompts arrived at or after `since` (ms). */
  received(count: number, since: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * Agents' hooks as the scheduler reaches them (OpenClaw `POST /hooks/agent`, bearer token, answer
 * `{ok, runId}` once the turn is accepted), one server for every agent: it records each scheduled
 * prompt by task and arrival time. `acceptAfterMs` is how long an agent takes to accept a turn.
 * Other session keys (a caller's own round trips) are answered and not recorded. `hold`: scheduled
 * prompts are taken and never answered, so their sender is mid-delivery for as long as the test likes.
 */
export async function startHooksStandIn(options: {
  token: string;
  acceptAfterMs?: number;
  port?: number;
  hold?: boolean;
}): Promise<HooksStandIn> {
  const deliveries: HookDelivery[] = [];
  const events = new EventEmitter();
  let unauthorized = 0;
  const server = createServer((req, res) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      text += chunk;
    });
    req.on('end', () => {
      const at = Date.now();
      if (req.method !== 'POST' || req.url !== '/hooks/agent') {
        res.writeHead(404).end();
        return;
      }
      if (req.headers.authorization !== `Bearer ${options.token}`) {
        unauthorized++;
        res.writeHead(401).end();
        return;
      }
      const body = JSON.parse(text) as { sessionKey?: string };
      if (body.sessionKey?.startsWith('scheduled:')) {
        deliveries.push({ taskId: body.sessionKey.slice('scheduled:'.length), at });
        events.emit('delivery');
      }
      if (options.hold && body.sessionKey?.startsWith('scheduled:')) return;
      const answer = () =>
        res.writeHead(200, { 'content-type': 'application/json' }).end(`{"ok":true,"runId":"${randomUUID()}"}`);
      if (options.acceptAfterMs) setTimeout(answer, options.acceptAfterMs);
      else answer();
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(options.port ?? 0, '127.0.0.1');
  await once(server, 'listening');
  const countSince = (since: number) => deliveries.reduce((n, d) => n + (d.at >= since ? 1 : 0), 0);
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    deliveries,
    get unauthorized() {
      return unauthorized;
    },
    received(count, since) {
      return new Promise((resolve) => {
        const check = () => {
          if (countSince(since) < count) return;
          events.off('delivery', check);
          resolve();
        };
        events.on('delivery', check);
        check();
      });
    },
    close() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
