import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EventEmitter, once } from 'node:events';

export interface HookCall {
  path: string;
  authorization: string | undefined;
  body: Record<string, unknown>;
  status: number;
  at: number;
}

/**
 * A real HTTP server standing in for an agent gateway's hooks (OpenClaw `/hooks/agent`,
 * `/hooks/wake`): it checks the bearer token and records every call; `failNext(n)` makes the
 * next n calls answer 500; `hold()` keeps answers back until `release()`, and `maxInFlight` is the
 * most calls it had unanswered at once.
 */
export async function startHooksReceiver(token: string) {
  const calls: HookCall[] = [];
  const events = new EventEmitter();
  let failures = 0;
  let gate: Promise<void> | null = null;
  let open = () => {};
  let inFlight = 0;
  let maxInFlight = 0;
  const server = createServer(async (req: IncomingMessage, res) => {
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    events.emit('in-flight', inFlight);
    let text = '';
    for await (const chunk of req) text += chunk;
    if (gate) await gate;
    inFlight--;
    const authorized = req.headers.authorization === `Bearer ${token}`;
    const status = !authorized ? 401 : failures > 0 ? 500 : 200;
    if (status === 500) failures--;
    const call: HookCall = {
      path: req.url ?? '',
      authorization: req.headers.authorization,
      body: JSON.parse(text || '{}'),
      status,
      at: Date.now(),
    };
    calls.push(call);
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify(
        status === 200
          ? { ok: true, runId: `run-${calls.length}` }
          : { ok: false, error: status === 401 ? 'Unauthorized' : 'boom' },
      ),
    );
    events.emit('call', call);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    failNext(n: number) {
      failures = n;
    },
    get maxInFlight() {
      return maxInFlight;
    },
    hold() {
      gate = new Promise<void>((resolve) => {
        open = resolve;
      });
    },
    release() {
      gate = null;
      open();
    },
    /** Resolves once `n` calls are unanswered at once. */
    inFlight(n: number): Promise<void> {
      if (inFlight >= n) return Promise.resolve();
      return new Promise((resolve) => {
        const listener = (count: number) => {
          if (count < n) return;
          events.off('in-flight', listener);
          resolve();
        };
        events.on('in-flight', listener);
      });
    },
    /** Resolves with the next call that matches. */
    next(match: (call: HookCall) => boolean): Promise<HookCall> {
      return new Promise((resolve) => {
        const listener = (call: HookCall) => {
          if (!match(call)) return;
          events.off('call', listener);
          resolve(call);
        };
        events.on('call', listener);
      });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
