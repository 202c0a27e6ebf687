import { useQuery } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import { get, query } from '../api.ts';
import { TimeChart } from '../chart.tsx';
import { count, usd } from '../format.ts';
import { bucketLabel, bytes, hasValues, metricSeries, percent, RANGES } from '../metrics.ts';
import type { Metrics, MetricsSample, Range } from '../types.ts';
import { ErrorNote, Loading, Select } from '../ui.tsx';
import { useAgent } from './agents.tsx';

interface MetricKind {
  key: string;
  title: string;
  pick: (point: MetricsSample) => number | null;
  series: { label: string; color: string; format: (v: number) => string }[];
}

const KINDS: MetricKind[] = [
  {
    key: 'cpu',
    title: 'CPU',
    pick: (p: MetricsSample) => p.cpuPercent,
    series: [{ label: 'CPU (%)', color: '#1f5f52', format: (v: number) => `${v.toFixed(1)}%` }],
  },
  {
    key: 'memory',
    title: 'Memory',
    pick: (p: MetricsSample) => p.memoryBytes,
    series: [{ label: 'Memory', color: '#38507a', format: bytes }],
  },
  {
    key: 'messages',
    title: 'Messages',
    pick: (p: MetricsSample) => p.messages,
    series: [{ label: 'Model calls', color: '#7a5200', format: count }],
  },
  {
    key: 'cost',
    title: 'Cost',
    pick: (p: MetricsSample) => p.costUsd,
    series: [{ label: 'Cost (USD)', color: '#a3201b', format: usd }],
  },
];

/** CPU, memory, messages and cost of the agent over a range, each chart with its numbers in a table beside it. */
export function MetricsPage() {
  const agent = useAgent();
  const [range, setRange] = useState<Range>('24h');
  const metrics = useQuery({
    queryKey: ['metrics', agent.id, range],
    queryFn: () => get<Metrics>(`/api/metrics${query({ agentId: agent.id, range })}`),
  });
  return (
    <>
      <div className="title-row">
        <h2>Metrics</h2>
        <Select label="Range" value={range} onChange={(e) => setRange(e.target.value as Range)}>
          {Object.entries(RANGES).map(([value, label]) => (
            <option key={value} value={value}>
              {label}
            </option>
          ))}
        </Select>
      </div>
      {metrics.isPending ? (
        <Loading what="metrics" />
      ) : metrics.isError ? (
        <ErrorNote error={metrics.error} />
      ) : (
        <MetricsView metrics={metrics.data} />
      )}
    </>
  );
}

function MetricsView({ metrics }: { metrics: Metrics }) {
  const { summary, points, range } = metrics;
  const xLabel = useMemo(
    () => (seconds: number) => bucketLabel(range, new Date(seconds * 1000).toISOString()),
    [range],
  );
  return (
    <>
      <section className="cards" aria-label="Summary">
        <div className="card">
          <h3>Uptime</h3>
          <p className="big">{percent(summary.uptimePercent)}</p>
          <p className="muted">of the samples, the container answered</p>
        </div>
        <div className="card">
          <h3>Messages</h3>
          <p className="big">{count(summary.messages)}</p>
          <p className="muted">model calls in the range</p>
        </div>
        <div className="card">
          <h3>Cost</h3>
          <p className="big">{usd(summary.costUsd)}</p>
          <p className="muted">AI spend in the range</p>
        </div>
      </section>
      {KINDS.map((kind) => (
        <MetricChart key={kind.key} kind={kind} points={points} range={range} xLabel={xLabel} />
      ))}
      <details className="card">
        <summary>
          The numbers by{' '}
          {range === '1h' ? 'minute' : range === '24h' ? '15 minutes' : range === '7d' ? 'hour' : '6 hours'} (UTC)
        </summary>
        <div className="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">From</th>
                <th scope="col">CPU</th>
                <th scope="col">Memory</th>
                <th scope="col">Messages</th>
                <th scope="col">Cost</th>
              </tr>
            </thead>
            <tbody>
              {points.map((p) => (
                <tr key={p.time}>
                  <td>{bucketLabel(range, p.time)}</td>
                  <td>{percent(p.cpuPercent)}</td>
                  <td>{p.memoryBytes === null ? '—' : bytes(p.memoryBytes)}</td>
                  <td>{p.messages === null ? '—' : count(p.messages)}</td>
                  <td>{p.costUsd === null ? '—' : usd(p.costUsd)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </>
  );
}

function MetricChart({
  kind,
  points,
  range,
  xLabel,
}: {
  kind: MetricKind;
  points: MetricsSample[];
  range: Range;
  xLabel: (seconds: number) => string;
}) {
  const data = useMemo(() => metricSeries(points, kind.pick), [points, kind]);
  return (
    <section className="card" aria-labelledby={`metric-${kind.key}`}>
      <h3 id={`metric-${kind.key}`}>{kind.title}</h3>
      {hasValues(points, kind.pick) ? (
        <TimeChart
          label={`${kind.title}, ${RANGES[range].toLowerCase()}`}
          data={data}
          series={kind.series}
          xLabel={xLabel}
        />
      ) : (
        <p className="muted">Nothing measured in this range yet.</p>
      )}
    </section>
  );
}
