import { PLAN_PRICES_GBP } from '@agentyard/proto-schemas';
import type { LocalCheckoutView } from './local-checkout.ts';

/** Plain server-rendered pages of the development billing provider; every value shown is escaped. */

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex"><title>${escapeHtml(title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem;line-height:1.5}
.dev{border:2px solid #b45309;background:#fef3c7;padding:.75rem 1rem;border-radius:.5rem}
button{font-size:1rem;padding:.6rem 1.2rem;cursor:pointer}</style></head>
<body>${body}</body></html>`;
}

const developmentNotice = (
  what: 'checkout' | 'portal',
) => `<p class="dev"><strong>DEVELOPMENT ${what}.</strong> This platform runs with
<code>BILLING_PROVIDER=local</code>: no payment is taken and no card is asked for. Completing it gives the
account what a real payment would. Production uses Stripe.</p>`;

/** What is being bought, and one button that completes it (a same-origin form post). */
export function localCheckoutPage(view: LocalCheckoutView, actionUrl: string): string {
  const what =
    view.purchase.kind === 'subscription'
      ? `<p>Plan: <strong>${escapeHtml(view.purchase.plan)}</strong> — £${PLAN_PRICES_GBP[view.purchase.plan]} per month (spec prices, GBP).</p>`
      : `<p>AI credits: <strong>$${view.purchase.amountUsd.toFixed(2)}</strong>, once.</p>`;
  const action =
    view.status === 'open'
      ? `<form method="post" action="${escapeHtml(actionUrl)}"><button type="submit">Complete development checkout</button></form>`
      : `<p>This checkout is ${view.status === 'complete' ? 'already completed' : 'expired'}; start a new one from the dashboard.</p>`;
  return page('Development checkout', `<h1>Development checkout</h1>${developmentNotice('checkout')}${what}${action}`);
}

/** The development customer portal: the subscription, and a button that cancels it. */
export function localPortalPage(
  subscription: { plan: string | null; status: string; currentPeriodEnd: string | null } | null,
  cancelUrl: string,
  dashboardUrl: string,
): string {
  const body =
    subscription && subscription.status !== 'canceled'
      ? `<p>Subscription: <strong>${escapeHtml(subscription.plan ?? 'unknown plan')}</strong>, ${escapeHtml(subscription.status)}${subscription.currentPeriodEnd ? `, current period ends ${escapeHtml(subscription.currentPeriodEnd.slice(0, 10))}` : ''}.</p>
<form method="post" action="${escapeHtml(cancelUrl)}"><button type="submit">Cancel subscription now</button></form>`
      : '<p>No active subscription.</p>';
  return page(
    'Development billing portal',
    `<h1>Development billing portal</h1>${developmentNotice('portal')}${body}<p><a href="${escapeHtml(dashboardUrl)}">Back to the dashboard</a></p>`,
  );
}
