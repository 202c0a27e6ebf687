// The agent's metrics (GET /api/metrics) as the charts want them. A bucket the API answers null for
// (nothing sampled, nothing used) stays null, which the chart draws as a gap rather than a zero.
import type { MetricsSample, Range } from './types.ts';

export const RANGES: Record<Range, string> = {
  '1h': 'Last hour',
  '24h': 'Last 24 hours',
  '7d': 'Last 7 days',
  '30d': 'Last 30 days',
};

/** x in seconds since the epoch, then the picked value of each bucket (null kept as null). */
export function metricSeries(
  points: readonly MetricsSample[],
  pick: (point: MetricsSample) => number | null,
): [number[], (number | null)[]] {
  return [points.map((p) => Date.parse(p.time) / 1000), points.map(pick)];
}

/** Whether any bucket of the range has a value of this kind (else the chart says so instead of drawing nothing). */
export function hasValues(points: readonly MetricsSample[], pick: (point: MetricsSample) => number | null): boolean {
  return points.some((p) => pick(p) !== null);
}

/** An axis or table label for a bucket's start: the time of day within a day's range, the day beyond it (UTC, as the buckets). */
export function bucketLabel(range: Range, iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const time = date.toLocaleTimeString('en-GB', { hour: '2-digit', minute: '2-digit', timeZone: 'UTC' });
  const day = date.toLocaleDateString('en-US', { month: 'short', day: 'numeric', timeZone: 'UTC' });
  if (range === '1h' || range === '24h') return time;
  return range === '7d' ? `${day} ${time}` : day;
}

/** Bytes in the largest unit that keeps a number of at least one (memory of a container). */
export function bytes(value: number): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let amount = value;
  let unit = 0;
  while (Math.abs(amount) >= 1024 && unit < units.length - 1) {
    amount /= 1024;
    unit += 1;
  }
  return `${unit === 0 ? amount : amount.toFixed(amount >= 100 ? 0 : 1)} ${units[unit]}`;
}

/** A percentage with one decimal, or "—" when there is none. */
export function percent(value: number | null): string {
  return value === null ? '—' : `${value.toFixed(1)}%`;
}
