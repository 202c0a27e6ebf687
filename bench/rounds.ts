// What the benchmarks compute over rounds that alternate between targets: medians, the CPU time of
// the processes that served a round, and the cost of per-request metrics (METRICS=off beside on).
import { readFileSync } from 'node:fs';

export const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

/** The p-th percentile (0–100) of xs, nearest rank. */
export const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
};

/** CPU time (µs, user + system) a process has used so far, from /proc (Linux; clock ticks of 10 ms); 0 once it is gone. */
export function cpuMicros(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10_000;
  } catch {
    return 0;
  }
}

const ms = (n: number) => String(Number(n.toFixed(2)));
const spread = (xs: number[]) => `${ms(Math.min(...xs))}–${ms(Math.max(...xs))}`;

/**
 * Metrics on − off in latency: the difference of the two pairs' medians over rounds, and the spread
 * between rounds of each pair, since a difference inside that spread is noise.
 */
export function metricsOnOff(on: { p50: number; p99: number }[], off: { p50: number; p99: number }[]): string {
  const diff = (key: 'p50' | 'p99') => ms(median(on.map((r) => r[key])) - median(off.map((r) => r[key])));
  const band = (key: 'p50' | 'p99') =>
    `${key} on ${spread(on.map((r) => r[key]))} / off ${spread(off.map((r) => r[key]))} ms`;
  return `p50 ${diff('p50')} ms, p99 ${diff('p99')} ms (noise, the spread between rounds of one pair: ${band('p50')}, ${band('p99')})`;
}
