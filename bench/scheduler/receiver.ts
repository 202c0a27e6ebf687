// The bench's stand-in for the agents' hooks, in a process of its own (so its work is not counted
// against the bench driver's timers): checks the bearer token, counts each task's deliveries per
// due minute and the lag behind that minute, and answers the parent's 'report' message with them.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { randomUUID } from 'node:crypto';

const MINUTE = 60_000;
const hooksToken = process.env.BENCH_HOOKS_TOKEN!;
const baselineSession = process.env.BENCH_BASELINE_SESSION!;
const deliveries = new Map<string, number>(); // `${taskId}@${dueMinute}` -> count
const lags: [due: number, lag: number][] = [];
let unauthorized = 0;

const server = createServer((req, res) => {
  let text = '';
  req.setEncoding('utf8');
  req.on('data', (chunk: string) => {
    text += chunk;
  });
  req.on('end', () => {
    const at = Date.now();
    if (req.headers.authorization !== `Bearer ${hooksToken}`) {
      unauthorized++;
      res.writeHead(401).end();
      return;
    }
    const body = JSON.parse(text) as { sessionKey: string };
    if (body.sessionKey !== baselineSession) {
      const due = Math.floor(at / MINUTE) * MINUTE; // every task fires on the minute; lag stays well under one
      const key = `${body.sessionKey.slice('scheduled:'.length)}@${due}`;
      deliveries.set(key, (deliveries.get(key) ?? 0) + 1);
      lags.push([due, at - due]);
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(`{"ok":true,"runId":"${randomUUID()}"}`);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1');
await once(server, 'listening');
process.send!({ type: 'listening', port: (server.address() as AddressInfo).port });
process.on('message', (message: { type: string }) => {
  if (message.type === 'report') process.send!({ type: 'report', deliveries: [...deliveries], lags, unauthorized });
  if (message.type === 'close') {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  }
});
