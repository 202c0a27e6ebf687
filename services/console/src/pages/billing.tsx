import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { get, post, put } from '../api.ts';
import { usd, when } from '../format.ts';
import type { BillingView, CreditsView, Limits, Plan, Redirect } from '../types.ts';
import { Button, ErrorNote, Field, Loading, Meter, Notice } from '../ui.tsx';
import { AgentLimitsPanel, KeyLimitsPanel, ProviderKeysPanel } from './budget-limits.tsx';

const PLANS: Plan[] = ['solo', 'collective', 'label', 'network'];

/** Sends the browser to a checkout or portal page the API answered. */
function go(redirect: Redirect) {
  window.location.assign(redirect.url);
}

export function BillingPage() {
  const billing = useQuery({ queryKey: ['billing'], queryFn: () => get<BillingView>('/api/billing') });
  const checkout = useMutation({
    mutationFn: (plan: Plan) => post<Redirect>('/api/billing/checkout', { plan }),
    onSuccess: go,
  });
  const portal = useMutation({ mutationFn: () => post<Redirect>('/api/billing/portal'), onSuccess: go });
  if (billing.isPending)
    return (
      <>
        <h1>Billing</h1>
        <Loading what="billing" />
      </>
    );
  if (billing.isError)
    return (
      <>
        <h1>Billing</h1>
        <ErrorNote error={billing.error} />
      </>
    );
  const { plan, subscription, usage } = billing.data;
  return (
    <>
      <h1>Billing</h1>
      <section className="card" aria-labelledby="plan">
        <h2 id="plan">Plan</h2>
        {plan ? (
          <>
            <p className="big">{plan}</p>
            {subscription && (
              <p className="muted">
                Subscription {subscription.status}
                {subscription.currentPeriodEnd
                  ? `, ${subscription.cancelAtPeriodEnd ? 'ends' : 'renews'} ${when(subscription.currentPeriodEnd)}`
                  : ''}
              </p>
            )}
            {usage.includedUsd > 0 && (
              <Meter
                label="AI allowance this month"
                share={Math.min(1, usage.monthUsd / usage.includedUsd)}
                text={`${usd(usage.monthUsd)} of ${usd(usage.includedUsd)}`}
              />
            )}
            <Button
              className="button secondary"
              busy={portal.isPending}
              busyLabel="Opening the portal…"
              onClick={() => portal.mutate()}
            >
              Manage subscription
            </Button>
            <ErrorNote error={portal.error} />
          </>
        ) : (
          <>
            <p>
              No plan yet. Agents need a plan; choose one to subscribe (the checkout shows its price before you pay).
            </p>
            <ul className="cards plans">
              {PLANS.map((name) => (
                <li key={name} className="card">
                  <h3>{name}</h3>
                  <Button
                    busy={checkout.isPending && checkout.variables === name}
                    busyLabel="Opening checkout…"
                    disabled={checkout.isPending}
                    onClick={() => checkout.mutate(name)}
                    aria-label={`Subscribe to ${name}`}
                  >
                    Subscribe
                  </Button>
                </li>
              ))}
            </ul>
            <ErrorNote error={checkout.error} />
          </>
        )}
      </section>
      <CreditsPanel balance={billing.data.credits.balanceUsd} />
      <LimitsPanel />
      <AgentLimitsPanel />
      <KeyLimitsPanel />
      <ProviderKeysPanel />
    </>
  );
}

function CreditsPanel({ balance }: { balance: number }) {
  const ledger = useQuery({ queryKey: ['credits'], queryFn: () => get<CreditsView>('/api/credits?limit=50') });
  const [amount, setAmount] = useState('20');
  const buy = useMutation({
    mutationFn: () => post<Redirect>('/api/billing/credits', { amountUsd: Number(amount) }),
    onSuccess: go,
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    buy.mutate();
  };
  return (
    <section className="card" aria-labelledby="credits">
      <h2 id="credits">Credits</h2>
      <p>
        Balance: <strong>{usd(balance)}</strong>. Credits pay for AI use beyond your plan's allowance.
      </p>
      <form onSubmit={submit} className="row">
        <Field
          label="Amount (USD)"
          type="number"
          min={5}
          max={1000}
          step="0.01"
          required
          value={amount}
          onChange={(e) => setAmount(e.target.value)}
        />
        <Button type="submit" busy={buy.isPending} busyLabel="Opening checkout…">
          Buy credits
        </Button>
      </form>
      <ErrorNote error={buy.error} />
      <h3>Ledger</h3>
      {ledger.isPending ? (
        <Loading what="the ledger" />
      ) : ledger.isError ? (
        <ErrorNote error={ledger.error} />
      ) : ledger.data.entries.length === 0 ? (
        <p className="muted">No credit movements yet.</p>
      ) : (
        <div className="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Kind</th>
                <th scope="col">Amount</th>
                <th scope="col">Note</th>
              </tr>
            </thead>
            <tbody>
              {ledger.data.entries.map((e) => (
                <tr key={e.id}>
                  <td>{when(e.createdAt)}</td>
                  <td>{e.kind}</td>
                  <td>{usd(e.amountUsd)}</td>
                  <td>{e.note}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

function LimitsPanel() {
  const queries = useQueryClient();
  const limits = useQuery({ queryKey: ['limits'], queryFn: () => get<Limits>('/api/billing/limits') });
  const [monthly, setMonthly] = useState<string | undefined>();
  const save = useMutation({
    mutationFn: (body: Limits) => put<Limits>('/api/billing/limits', body),
    onSuccess: () => {
      setMonthly(undefined);
      return Promise.all([
        queries.invalidateQueries({ queryKey: ['limits'] }),
        queries.invalidateQueries({ queryKey: ['billing'] }),
      ]);
    },
  });
  if (limits.isPending)
    return (
      <section className="card">
        <h2>Budget</h2>
        <Loading what="your budget" />
      </section>
    );
  if (limits.isError)
    return (
      <section className="card">
        <h2>Budget</h2>
        <ErrorNote error={limits.error} />
      </section>
    );
  const value = monthly ?? (limits.data.monthlyUsd === null ? '' : String(limits.data.monthlyUsd));
  const submit = (event: FormEvent) => {
    event.preventDefault();
    save.mutate({ monthlyUsd: value === '' ? null : Number(value), agents: limits.data.agents });
  };
  return (
    <section className="card" aria-labelledby="budget">
      <h2 id="budget">Budget</h2>
      <p className="muted">
        A monthly limit on AI spend: once reached, your agents' model calls are refused until the next month.
      </p>
      <form onSubmit={submit} className="row">
        <Field
          label="Monthly limit (USD)"
          type="number"
          min={0}
          step="0.01"
          value={value}
          onChange={(e) => setMonthly(e.target.value)}
          hint="Empty: no limit."
        />
        <Button type="submit" busy={save.isPending} busyLabel="Saving…">
          Save limit
        </Button>
      </form>
      <ErrorNote error={save.error} />
      {save.isSuccess && <Notice>Saved.</Notice>}
    </section>
  );
}
