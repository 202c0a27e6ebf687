import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { dayLabel } from './format.ts';

/** A daily series as uPlot wants it: x in seconds since the epoch (UTC midnight), one y array per series. */
export function dailySeries(days: { date: string }[], ...values: ((day: never) => number)[]): uPlot.AlignedData {
  const xs = days.map((d) => Date.parse(`${d.date}T00:00:00Z`) / 1000);
  return [xs, ...values.map((value) => days.map((d) => value(d as never)))];
}

const dayAxisLabel = (seconds: number) => dayLabel(new Date(seconds * 1000).toISOString().slice(0, 10));

/**
 * A time-series chart (uPlot, canvas) sized to its container; `label` names it for screen readers,
 * which read the table the page shows beside it. A null value is a gap in the line.
 */
export function TimeChart({
  label,
  data,
  series,
  xLabel = dayAxisLabel,
}: {
  label: string;
  data: uPlot.AlignedData;
  series: { label: string; color: string; format: (v: number) => string }[];
  xLabel?: (seconds: number) => string;
}) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const width = () => Math.max(260, element.clientWidth);
    const plot = new uPlot(
      {
        width: width(),
        height: 240,
        scales: { x: { time: true } },
        axes: [
          { values: (_u, ticks) => ticks.map(xLabel) },
          { values: (_u, ticks) => ticks.map((t) => series[0]!.format(t)), size: 70 },
        ],
        series: [
          {},
          ...series.map((s) => ({
            label: s.label,
            stroke: s.color,
            width: 2,
            fill: `${s.color}22`,
            value: (_u: uPlot, v: number | null) => (v === null ? '—' : s.format(v)),
          })),
        ],
      },
      data,
      element,
    );
    const resize = new ResizeObserver(() => plot.setSize({ width: width(), height: 240 }));
    resize.observe(element);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [data, series, xLabel]);
  return <div className="chart" ref={box} role="img" aria-label={label} />;
}
