// The load generator of bench/ai-gateway, in a process of its own. Open loop: requests are sent
// evenly spaced at the target rate whatever the answers do, and each latency is measured from the
// request's scheduled send time, so a slow target's queueing shows instead of lowering the rate.
// Options as JSON in argv[2]; prints one JSON line.
import { Pool } from 'undici';

interface Options {
  url: string;
  headers: Record<string, string>;
  body: string;
  rate: number;
  seconds: number;
  connections: number;
}
const { url, headers, body, rate, seconds, connections } = JSON.parse(process.argv[2]!) as Options;
const target = new URL(url);
const pool = new Pool(target.origin, {
  connections,
  pipelining: 1,
  keepAliveTimeout: 60_000,
  headersTimeout: 30_000,
  bodyTimeout: 30_000,
});

const total = Math.round(rate * seconds);
const intervalMs = 1000 / rate;
const latencies = new Float64Array(total);
let done = 0;
let ok = 0;
let errors = 0;
let sent = 0;
const firstError: string[] = [];

async function send(index: number, scheduled: number): Promise<void> {
  try {
    const response = await pool.request({ path: target.pathname + target.search, method: 'POST', headers, body });
    await response.body.text();
    if (response.statusCode === 200) ok++;
    else {
      errors++;
      if (firstError.length === 0) firstError.push(`status ${response.statusCode}`);
    }
  } catch (error) {
    errors++;
    if (firstError.length === 0) firstError.push((error as Error).message);
  }
  latencies[index] = performance.now() - scheduled;
  done++;
}

const cpuStart = process.cpuUsage();
const start = performance.now() + 5;
await new Promise<void>((resolve) => {
  const tick = () => {
    const now = performance.now();
    while (sent < total && start + sent * intervalMs <= now) {
      const scheduled = start + sent * intervalMs;
      void send(sent, scheduled).then(() => {
        if (done === total) resolve();
      });
      sent++;
    }
    if (sent < total) setTimeout(tick, Math.max(0, start + sent * intervalMs - performance.now()));
  };
  setTimeout(tick, 5);
});
const elapsed = (performance.now() - start) / 1000;
await pool.close();
const sorted = latencies.sort();
const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
const cpu = process.cpuUsage(cpuStart);
console.log(
  JSON.stringify({
    sent: total,
    ok,
    errors,
    firstError: firstError[0] ?? null,
    requestsPerSecond: total / elapsed,
    p50: at(0.5),
    p99: at(0.99),
    p999: at(0.999),
    max: sorted[sorted.length - 1] ?? 0,
    cpuMicros: cpu.user + cpu.system,
  }),
);
