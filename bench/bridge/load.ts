// The load generator of bench/bridge, run as its own process so it never shares an event loop with
// the service or the bench's bookkeeping. Options as JSON in argv[2]; prints one JSON line.
//
// Open loop (`rate`): request i is due at start + i/rate whether or not earlier ones have answered,
// and its latency is counted from that due time, so a slow answer delays nothing it should not and
// queueing behind it is measured (no coordinated omission). Closed loop (`connections` without a
// rate): that many requests in flight, each sent when the previous answers (max throughput).
// Requests cycle through `paths`; an answer counts as an error unless its status is `status` and,
// when given, its body contains `expect`.
import http from 'node:http';

interface Options {
  origin: string;
  paths: string[];
  headers: Record<string, string>;
  seconds: number;
  rate?: number;
  connections: number;
  status: number;
  expect?: string;
}
const options = JSON.parse(process.argv[2]!) as Options;
const { hostname, port } = new URL(options.origin);
const agent = new http.Agent({ keepAlive: true, maxSockets: options.rate ? 256 : options.connections });

const latencies: number[] = [];
let errors = 0;
let sent = 0;

function request(path: string, due: number): Promise<void> {
  return new Promise((resolve) => {
    const req = http.get({ hostname, port, path, headers: options.headers, agent, timeout: 10_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        latencies.push(performance.now() - due);
        if (
          res.statusCode !== options.status ||
          (options.expect && !Buffer.concat(chunks).toString().includes(options.expect))
        )
          errors++;
        resolve();
      });
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => {
      errors++;
      resolve();
    });
  });
}

const start = performance.now();
const end = start + options.seconds * 1000;
const inFlight = new Set<Promise<void>>();
const next = () => options.paths[sent++ % options.paths.length]!;

if (options.rate) {
  const interval = 1000 / options.rate;
  await new Promise<void>((done) => {
    const tick = () => {
      const now = performance.now();
      // Everything due by now goes out now; a late timer never lowers the rate.
      while (start + sent * interval <= Math.min(now, end)) {
        const due = start + sent * interval;
        const p = request(next(), due);
        inFlight.add(p);
        p.then(() => inFlight.delete(p));
      }
      if (start + sent * interval >= end) return done();
      setTimeout(tick, Math.max(0, start + sent * interval - performance.now()));
    };
    tick();
  });
} else {
  await Promise.all(
    Array.from({ length: options.connections }, async () => {
      while (performance.now() < end) await request(next(), performance.now());
    }),
  );
}
await Promise.all(inFlight);
const elapsed = (performance.now() - start) / 1000;
agent.destroy();

const sorted = latencies.sort((a, b) => a - b);
const at = (q: number) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]! : Number.NaN;
console.log(
  JSON.stringify({
    requests: sent,
    answered: latencies.length,
    requestsPerSecond: latencies.length / elapsed,
    p50: at(0.5),
    p99: at(0.99),
    max: at(1),
    errors,
  }),
);
