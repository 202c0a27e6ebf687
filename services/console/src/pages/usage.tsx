import { useInfiniteQuery, useQuery } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import { Link } from 'react-router';
import { get, query } from '../api.ts';
import { dailySeries, TimeChart } from '../chart.tsx';
import { count, dayLabel, usd, when } from '../format.ts';
import type { Cost, Usage, UsageCalls } from '../types.ts';
import { Button, Empty, ErrorNote, Loading, Select } from '../ui.tsx';

const PERIODS = { '7d': 'Last 7 days', '30d': 'Last 30 days', mtd: 'This month' } as const;
const COST_SERIES = [{ label: 'Cost (USD)', color: '#1f5f52', format: usd }];
const TOKEN_SERIES = [{ label: 'Tokens', color: '#7a5200', format: count }];

type Period = keyof typeof PERIODS;

/** What the user's agents spent on AI in a period: totals, by day, by model, by agent, and the calls that failed. */
export function UsagePage() {
  const [period, setPeriod] = useState<Period>('30d');
  const cost = useQuery({
    queryKey: ['cost', period],
    queryFn: () => get<Cost>(`/api/dashboard/cost${query({ period })}`),
  });
  const days = period === '7d' ? 7 : 30;
  const usage = useQuery({
    queryKey: ['usage-summary', days],
    queryFn: () => get<Usage>(`/api/usage/summary${query({ days })}`),
  });
  return (
    <>
      <div className="title-row">
        <h1>Usage and cost</h1>
        <Select label="Period" value={period} onChange={(e) => setPeriod(e.target.value as Period)}>
          {Object.entries(PERIODS).map(([value, label]) => (
            <option key={value} value={value}>
              {label}
            </option>
          ))}
        </Select>
      </div>
      {usage.isError && <ErrorNote error={usage.error} />}
      {usage.data && <UsageTotals usage={usage.data} />}
      {cost.isPending ? (
        <Loading what="cost" />
      ) : cost.isError ? (
        <ErrorNote error={cost.error} />
      ) : cost.data.summary.totalCalls === 0 ? (
        <Empty title="No AI usage in this period">
          <p>
            Your agents' model calls show up here by day, model and agent. <Link to="/dashboard">Open an agent</Link>{' '}
            and give it something to do, or add a scheduled task.
          </p>
        </Empty>
      ) : (
        <>
          <CostByDay daily={cost.data.daily} period={period} />
          <CostByModel models={cost.data.modelBreakdown} />
          <CostByAgent agents={cost.data.agents} />
        </>
      )}
      <FailedCalls />
    </>
  );
}

function UsageTotals({ usage: { usage, days } }: { usage: Usage }) {
  return (
    <section className="cards" aria-label="Totals">
      <div className="card">
        <h2>AI cost</h2>
        <p className="big">{usd(usage.costUsd)}</p>
        <p className="muted">last {days} days</p>
      </div>
      <div className="card">
        <h2>Model calls</h2>
        <p className="big">{count(usage.calls)}</p>
        <p className="muted">
          {count(usage.turns)} turns
          {usage.failedCalls > 0 && ` · ${count(usage.failedCalls)} failed at every provider`}
        </p>
      </div>
      <div className="card">
        <h2>Tokens</h2>
        <p className="big">{count(usage.totalTokens)}</p>
        <p className="muted">
          {count(usage.inputTokens)} in · {count(usage.outputTokens)} out
        </p>
      </div>
    </section>
  );
}

function CostByDay({ daily, period }: { daily: Cost['daily']; period: Period }) {
  const costData = useMemo(() => dailySeries(daily, (d: { cost: number }) => d.cost), [daily]);
  const tokenData = useMemo(() => dailySeries(daily, (d: { tokens: number }) => d.tokens), [daily]);
  return (
    <section className="card" aria-labelledby="by-day">
      <h2 id="by-day">By day</h2>
      <TimeChart label={`AI cost by day, ${PERIODS[period].toLowerCase()}`} data={costData} series={COST_SERIES} />
      <TimeChart label={`Tokens by day, ${PERIODS[period].toLowerCase()}`} data={tokenData} series={TOKEN_SERIES} />
      <details>
        <summary>The numbers by day</summary>
        <div className="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Day</th>
                <th scope="col">Cost</th>
                <th scope="col">Tokens</th>
              </tr>
            </thead>
            <tbody>
              {daily.map((d) => (
                <tr key={d.date}>
                  <td>{dayLabel(d.date)}</td>
                  <td>{usd(d.cost)}</td>
                  <td>{count(d.tokens)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </section>
  );
}

function CostByModel({ models }: { models: Cost['modelBreakdown'] }) {
  return (
    <section className="card" aria-labelledby="by-model">
      <h2 id="by-model">By model</h2>
      <div className="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">Model</th>
              <th scope="col">Cost</th>
              <th scope="col">Share</th>
            </tr>
          </thead>
          <tbody>
            {models.map((m) => (
              <tr key={m.model}>
                <td>{m.model}</td>
                <td>{usd(m.cost)}</td>
                <td>
                  <meter min={0} max={100} value={m.percent} aria-label={`${m.model} share`}>
                    {m.percent}%
                  </meter>{' '}
                  {m.percent.toFixed(1)}%
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

function CostByAgent({ agents }: { agents: Cost['agents'] }) {
  return (
    <section className="card" aria-labelledby="by-agent">
      <h2 id="by-agent">By agent</h2>
      <div className="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">Agent</th>
              <th scope="col">Model</th>
              <th scope="col">Calls</th>
              <th scope="col">Tokens</th>
              <th scope="col">Cost</th>
              <th scope="col">Per call</th>
            </tr>
          </thead>
          <tbody>
            {agents.map((a) => (
              <tr key={a.name + a.model}>
                <td>{a.name}</td>
                <td>{a.model}</td>
                <td>{count(a.calls)}</td>
                <td>{count(a.tokens)}</td>
                <td>{usd(a.cost)}</td>
                <td>{usd(a.avgCostPerCall)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

type Call = UsageCalls['calls'][number];
const statusOf = (status: number | null) => (status === null ? 'no answer' : String(status));

/** The calls no provider served (every retry and fallback failed), newest first, each opening onto its attempts. */
function FailedCalls() {
  const calls = useInfiniteQuery({
    queryKey: ['usage-calls', 'failed'],
    queryFn: ({ pageParam }) =>
      get<UsageCalls>(`/api/usage/calls${query({ outcome: 'failed', limit: 20, cursor: pageParam })}`),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (page) => page.nextCursor ?? undefined,
  });
  const shown: Call[] = calls.data?.pages.flatMap((page) => page.calls) ?? [];
  return (
    <section className="card" aria-labelledby="failed-calls">
      <h2 id="failed-calls">Failed calls</h2>
      <p className="muted">
        Calls no provider answered after every retry and the fallback: nothing was charged. Open one to see each
        attempt.
      </p>
      {calls.isPending ? (
        <Loading what="failed calls" />
      ) : calls.isError ? (
        <ErrorNote error={calls.error} />
      ) : shown.length === 0 ? (
        <p className="muted">None: every call was served.</p>
      ) : (
        <>
          <ul className="plain">
            {shown.map((call) => (
              <li key={call.id}>
                <details>
                  <summary>
                    {when(call.at)} · {call.model} · {call.attempts.length} attempts
                  </summary>
                  <div className="table-wrap">
                    <table aria-label={`Attempts of the call at ${when(call.at)}`}>
                      <thead>
                        <tr>
                          <th scope="col">#</th>
                          <th scope="col">Model</th>
                          <th scope="col">Provider</th>
                          <th scope="col">Status</th>
                          <th scope="col">Time</th>
                        </tr>
                      </thead>
                      <tbody>
                        {call.attempts.map((attempt, i) => (
                          // biome-ignore lint/suspicious/noArrayIndexKey: attempts are a fixed, ordered record
                          <tr key={i}>
                            <td>{i + 1}</td>
                            <td>{attempt.model}</td>
                            <td>{attempt.provider}</td>
                            <td>{statusOf(attempt.status)}</td>
                            <td>{attempt.ms} ms</td>
                          </tr>
                        ))}
                      </tbody>
                    </table>
                  </div>
                </details>
              </li>
            ))}
          </ul>
          {calls.hasNextPage && (
            <Button busy={calls.isFetchingNextPage} busyLabel="Loading…" onClick={() => calls.fetchNextPage()}>
              Show more
            </Button>
          )}
        </>
      )}
    </section>
  );
}
