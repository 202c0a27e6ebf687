import { useQuery } from '@tanstack/react-query';
import { Link, useSearchParams } from 'react-router';
import { get } from '../api.ts';
import { count, ofLimit, usd, when } from '../format.ts';
import { useAgentEvents } from '../live.ts';
import type { AgentList, BillingView, Cost, Stats } from '../types.ts';
import { Empty, ErrorNote, Loading, Meter, Notice, StatusBadge } from '../ui.tsx';

export function useAgents() {
  return useQuery({ queryKey: ['agents'], queryFn: () => get<AgentList>('/api/agents') });
}

export function DashboardPage() {
  const [params] = useSearchParams();
  const live = useAgentEvents();
  const agents = useAgents();
  const stats = useQuery({ queryKey: ['dashboard-stats'], queryFn: () => get<Stats>('/api/dashboard/stats') });
  const cost = useQuery({ queryKey: ['cost', 'mtd'], queryFn: () => get<Cost>('/api/dashboard/cost?period=mtd') });
  const billing = useQuery({ queryKey: ['billing'], queryFn: () => get<BillingView>('/api/billing') });
  const agentLimit = stats.data ? ofLimit(stats.data.agents.total, stats.data.agents.limit) : undefined;
  return (
    <>
      <div className="title-row">
        <h1>Dashboard</h1>
        <Link className="button" to="/agents/new">
          New agent
        </Link>
      </div>
      {params.get('checkout') === 'success' && (
        <Notice>Thank you: your plan is active. You can provision agents now.</Notice>
      )}
      {params.get('welcome') && (
        <Notice>
          Welcome to Agentyard. Verify your email from the mail we sent, choose a plan, then provision your first agent.
        </Notice>
      )}
      <section className="cards" aria-label="Counts and limits">
        <div className="card">
          <h2>Agents</h2>
          {stats.isPending ? (
            <Loading what="counts" />
          ) : stats.isError ? (
            <ErrorNote error={stats.error} />
          ) : (
            <>
              <p className="big">
                {count(stats.data.agents.active)} <span className="muted">running</span>
              </p>
              {agentLimit && <Meter label="Agents on your plan" share={agentLimit.share} text={agentLimit.text} />}
              <p className="muted">
                {count(stats.data.agents.newToday)} new today · {count(stats.data.tasks.total)} scheduled tasks ·{' '}
                {count(stats.data.skills.installed)} skills
              </p>
            </>
          )}
        </div>
        <div className="card">
          <h2>Cost this month</h2>
          {cost.isPending ? (
            <Loading what="cost" />
          ) : cost.isError ? (
            <ErrorNote error={cost.error} />
          ) : (
            <>
              <p className="big">{usd(cost.data.summary.totalCost)}</p>
              <p className="muted">
                {count(cost.data.summary.totalCalls)} model calls · {count(cost.data.summary.totalTokens)} tokens
              </p>
              {billing.data && billing.data.usage.includedUsd > 0 && (
                <Meter
                  label="Included AI allowance used"
                  share={Math.min(1, billing.data.usage.monthUsd / billing.data.usage.includedUsd)}
                  text={`${usd(billing.data.usage.monthUsd)} of ${usd(billing.data.usage.includedUsd)}`}
                />
              )}
              <Link to="/usage">Usage and cost</Link>
            </>
          )}
        </div>
        <div className="card">
          <h2>Plan</h2>
          {billing.isPending ? (
            <Loading what="your plan" />
          ) : billing.isError ? (
            <ErrorNote error={billing.error} />
          ) : billing.data.plan ? (
            <>
              <p className="big">{billing.data.plan}</p>
              <Link to="/billing">Billing</Link>
            </>
          ) : (
            <>
              <p>No plan yet: agents need one.</p>
              <Link className="button" to="/billing">
                Choose a plan
              </Link>
            </>
          )}
        </div>
      </section>
      <section aria-labelledby="agents-heading">
        <div className="title-row">
          <h2 id="agents-heading">Your agents</h2>
          <span className={`live live-${live}`} role="status">
            {live === 'live'
              ? 'Live status'
              : live === 'connecting'
                ? 'Connecting to live status…'
                : 'Live status unavailable: reload to refresh'}
          </span>
        </div>
        {agents.isPending ? (
          <Loading what="your agents" />
        ) : agents.isError ? (
          <ErrorNote error={agents.error} />
        ) : agents.data.agents.length === 0 ? (
          <Empty title="No agents yet">
            <p>
              {billing.data?.plan
                ? 'Provision your first agent: it runs in its own container and is ready in a minute or two.'
                : 'Choose a plan on the billing page, then provision your first agent.'}
            </p>
            <Link className="button" to={billing.data?.plan ? '/agents/new' : '/billing'}>
              {billing.data?.plan ? 'Provision an agent' : 'Choose a plan'}
            </Link>
          </Empty>
        ) : (
          <ul className="agent-list">
            {agents.data.agents.map((agent) => (
              <li key={agent.id} className="card agent-row">
                <Link to={`/agents/${agent.id}`} className="agent-name">
                  {agent.name}
                </Link>
                <StatusBadge status={agent.status} hibernation={agent.hibernation} />
                <span className="muted">{agent.model}</span>
                <span className="muted">created {when(agent.createdAt)}</span>
              </li>
            ))}
          </ul>
        )}
      </section>
    </>
  );
}
