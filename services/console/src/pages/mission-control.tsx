import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';
import { get, query } from '../api.ts';
import { circleLayout, edgeLine } from '../fleet-graph.ts';
import { count, usd, when } from '../format.ts';
import type { FleetCosts, FleetGraph, FleetTraces } from '../types.ts';
import { Button, Empty, ErrorNote, Loading, Select, StatusBadge, TableRegion } from '../ui.tsx';

const SIZE = 420;
const RADIUS = 34;
const LIVE_MS = 10_000;

/** The agents as circles, bus traffic as arrows with message counts; the same in a table for screen readers. */
function Graph({ graph }: { graph: FleetGraph }) {
  const layout = circleLayout(
    graph.nodes.map((n) => n.id),
    SIZE,
  );
  const names = new Map(graph.nodes.map((n) => [n.id, n.name]));
  return (
    <div className="card">
      <svg
        viewBox={`0 0 ${SIZE} ${SIZE}`}
        className="fleet-graph"
        role="img"
        aria-label={`${graph.nodes.length} agents and ${graph.edges.length} bus links in the last ${graph.windowHours} hours`}
      >
        <defs>
          <marker
            id="arrow"
            viewBox="0 0 10 10"
            refX="9"
            refY="5"
            markerWidth="8"
            markerHeight="8"
            orient="auto-start-reverse"
          >
            <path d="M 0 0 L 10 5 L 0 10 z" fill="currentColor" />
          </marker>
        </defs>
        {graph.edges.map((edge) => {
          const line = edgeLine(layout.get(edge.from)!, layout.get(edge.to)!, RADIUS + 4);
          return (
            <g key={`${edge.from}>${edge.to}`}>
              <line
                {...line}
                stroke="currentColor"
                strokeWidth={1 + Math.min(4, Math.log2(edge.messages))}
                markerEnd="url(#arrow)"
              />
              <text
                x={(line.x1 + line.x2) / 2}
                y={(line.y1 + line.y2) / 2 - 6}
                textAnchor="middle"
                className="edge-label"
              >
                {edge.messages}
              </text>
            </g>
          );
        })}
        {graph.nodes.map((node) => {
          const at = layout.get(node.id)!;
          return (
            <g key={node.id} className={`node node-${node.status}`}>
              <circle cx={at.x} cy={at.y} r={RADIUS} />
              <text x={at.x} y={at.y + 4} textAnchor="middle">
                {node.name.length > 10 ? `${node.name.slice(0, 9)}…` : node.name}
              </text>
            </g>
          );
        })}
      </svg>
      <TableRegion label="Agents table">
        <table>
          <caption>Agents</caption>
          <thead>
            <tr>
              <th scope="col">Agent</th>
              <th scope="col">Status</th>
              <th scope="col">Health</th>
              <th scope="col">Restarts</th>
              <th scope="col">Last error</th>
            </tr>
          </thead>
          <tbody>
            {graph.nodes.map((node) => (
              <tr key={node.id}>
                <td>
                  <Link to={`/agents/${node.id}`}>{node.name}</Link>
                </td>
                <td>
                  <StatusBadge status={node.status} />
                </td>
                <td>{node.health ?? 'no report'}</td>
                <td>{count(node.restarts)}</td>
                <td>{node.lastError ?? '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableRegion>
      {graph.edges.length > 0 && (
        <TableRegion label="Bus traffic table">
          <table>
            <caption>Bus traffic in the last {graph.windowHours} hours</caption>
            <thead>
              <tr>
                <th scope="col">From</th>
                <th scope="col">To</th>
                <th scope="col">Messages</th>
                <th scope="col">Delivered</th>
                <th scope="col">Failed</th>
                <th scope="col">Last</th>
              </tr>
            </thead>
            <tbody>
              {graph.edges.map((edge) => (
                <tr key={`${edge.from}>${edge.to}`}>
                  <td>{names.get(edge.from)}</td>
                  <td>{names.get(edge.to)}</td>
                  <td>{count(edge.messages)}</td>
                  <td>{count(edge.delivered)}</td>
                  <td>{count(edge.failed)}</td>
                  <td>{when(edge.lastAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableRegion>
      )}
    </div>
  );
}

function Runs({ names }: { names: Map<string, string> }) {
  const [kind, setKind] = useState('');
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors.at(-1);
  const traces = useQuery({
    queryKey: ['mission-control', 'traces', kind, cursor],
    queryFn: () =>
      get<FleetTraces>(`/api/mission-control/fleet/traces${query({ kind: kind || undefined, cursor, limit: 25 })}`),
    refetchInterval: cursor ? false : LIVE_MS,
  });
  return (
    <section aria-labelledby="runs">
      <h2 id="runs">Runs</h2>
      <div className="row">
        <Select
          label="Kind of run"
          value={kind}
          onChange={(e) => {
            setKind(e.target.value);
            setCursors([]);
          }}
        >
          <option value="">All</option>
          <option value="chat">Model calls</option>
          <option value="channel">Channel messages</option>
          <option value="scheduled">Scheduled prompts</option>
          <option value="heartbeat">Heartbeats</option>
          <option value="bus">Bus messages</option>
        </Select>
      </div>
      {traces.isPending ? (
        <Loading what="the runs" />
      ) : traces.isError ? (
        <ErrorNote error={traces.error} />
      ) : traces.data.traces.length === 0 ? (
        <Empty title="No runs">
          <p>Runs show here once your agents think, run a schedule or message each other.</p>
        </Empty>
      ) : (
        <TableRegion label="Runs table" card>
          <table>
            <thead>
              <tr>
                <th scope="col">Started</th>
                <th scope="col">Agent</th>
                <th scope="col">Kind</th>
                <th scope="col">Status</th>
                <th scope="col">Duration</th>
                <th scope="col">Tokens</th>
                <th scope="col">Cost</th>
              </tr>
            </thead>
            <tbody>
              {traces.data.traces.map((run) => (
                <tr key={run.id}>
                  <td>{when(run.startedAt)}</td>
                  <td>{names.get(run.agentId) ?? run.agentId}</td>
                  <td>{run.kind}</td>
                  <td>{run.status}</td>
                  <td>{run.durationMs === null ? '—' : `${count(run.durationMs)} ms`}</td>
                  <td>{run.tokens === null ? '—' : count(run.tokens)}</td>
                  <td>{run.costUsd === null ? '—' : usd(run.costUsd)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableRegion>
      )}
      <div className="row">
        {cursors.length > 0 && (
          <Button className="button secondary" onClick={() => setCursors([])}>
            Newest runs
          </Button>
        )}
        {traces.data?.nextCursor && (
          <Button className="button secondary" onClick={() => setCursors([...cursors, traces.data.nextCursor!])}>
            Older runs
          </Button>
        )}
      </div>
    </section>
  );
}

function Costs({ costs }: { costs: FleetCosts }) {
  return (
    <section aria-labelledby="costs">
      <h2 id="costs">Costs in {costs.month}</h2>
      <p>
        Plan <strong>{costs.plan}</strong>: {usd(costs.planFeeUsd)} a month, shared evenly by your agents. AI budget
        left this month: <strong>{usd(costs.budget.leftUsd)}</strong> (allowance {usd(costs.budget.includedUsd)},
        credits {usd(costs.budget.creditsUsd)}
        {costs.budget.monthlyLimitUsd !== null ? `, your limit ${usd(costs.budget.monthlyLimitUsd)}` : ''}, spent{' '}
        {usd(costs.budget.spentUsd)}).
      </p>
      <TableRegion label="Costs table" card>
        <table>
          <thead>
            <tr>
              <th scope="col">Agent</th>
              <th scope="col">AI calls</th>
              <th scope="col">Tokens</th>
              <th scope="col">AI cost</th>
              <th scope="col">Plan share</th>
              <th scope="col">Total</th>
              <th scope="col">Left of its limit</th>
            </tr>
          </thead>
          <tbody>
            {costs.agents.map((agent) => (
              <tr key={agent.agentId}>
                <td>{agent.name}</td>
                <td>
                  {count(agent.calls)}
                  {agent.failedCalls > 0 && <span className="muted"> ({count(agent.failedCalls)} failed)</span>}
                </td>
                <td>{count(agent.tokens)}</td>
                <td>{usd(agent.aiCostUsd)}</td>
                <td>{usd(agent.planShareUsd)}</td>
                <td>{usd(agent.totalUsd)}</td>
                <td>{agent.limitLeftUsd === null ? 'no limit' : usd(agent.limitLeftUsd)}</td>
              </tr>
            ))}
          </tbody>
          <tfoot>
            <tr>
              <th scope="row">All agents</th>
              <td />
              <td />
              <td>{usd(costs.totals.aiCostUsd)}</td>
              <td>{usd(costs.totals.planFeeUsd)}</td>
              <td>{usd(costs.totals.totalUsd)}</td>
              <td />
            </tr>
          </tfoot>
        </table>
      </TableRegion>
      {costs.totals.unattributedAiCostUsd > 0 && (
        <p>
          Of the AI cost, {usd(costs.totals.unattributedAiCostUsd)} came from calls made without an agent (your own
          keys).
        </p>
      )}
    </section>
  );
}

/** Mission control: the fleet's graph (live), its runs and its costs. */
export function MissionControlPage() {
  const graph = useQuery({
    queryKey: ['mission-control', 'graph'],
    queryFn: () => get<FleetGraph>('/api/mission-control/fleet/graph'),
    refetchInterval: LIVE_MS,
  });
  const costs = useQuery({
    queryKey: ['mission-control', 'costs'],
    queryFn: () => get<FleetCosts>('/api/mission-control/fleet/costs'),
    refetchInterval: LIVE_MS,
  });
  const names = new Map((graph.data?.nodes ?? []).map((n) => [n.id, n.name]));
  return (
    <>
      <h1>Mission control</h1>
      <section aria-labelledby="fleet">
        <h2 id="fleet">Your fleet</h2>
        {graph.isPending ? (
          <Loading what="your fleet" />
        ) : graph.isError ? (
          <ErrorNote error={graph.error} />
        ) : graph.data.nodes.length === 0 ? (
          <Empty title="No agents yet">
            <p>
              <Link to="/agents/new">Create an agent</Link> to see it here.
            </p>
          </Empty>
        ) : (
          <Graph graph={graph.data} />
        )}
      </section>
      <Runs names={names} />
      {costs.isPending ? (
        <Loading what="the costs" />
      ) : costs.isError ? (
        <ErrorNote error={costs.error} />
      ) : (
        <Costs costs={costs.data} />
      )}
    </>
  );
}
