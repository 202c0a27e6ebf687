import t from 'tap';
import { randomBytes } from 'node:crypto';
import { DEFAULT_AGENT_IMAGE } from '@agentyard/runtime';
import { startMailServer, startStripeServer, startWholePlatform, uniqueEmail } from '@agentyard/testing';
import { runContainers } from './support/containers.ts';
import { deliverStripeEvent, observe, registerAndVerify, WebClient } from './support/journey.ts';

// The paying user's journey of paying-user-journey.test.ts with BILLING_PROVIDER=stripe: the
// platform's official Stripe client talks to a local server speaking the Stripe API, which also
// plays the payer; what Stripe then sends (signed webhooks) makes the plan. The agent's thinking is
// proven there; here the journey stops once the plan lets an agent be provisioned.
t.setTimeout(900_000);

const engine = process.env.RUNTIME_DRIVER === 'docker' && process.env.DOCKER_HOST;

t.test(
  'with Stripe: verify, pay at Stripe Checkout, the signed webhooks make the plan, an agent can be provisioned',
  { skip: !engine ? 'no container engine' : false },
  async (t) => {
    const { own, ours, removeOurs } = runContainers();
    const mailbox = await startMailServer(t);
    const stripe = await startStripeServer();
    t.teardown(() => stripe.close());
    const webhookSecret = `whsec_${randomBytes(24).toString('hex')}`;
    const platform = await startWholePlatform(
      {
        RUNTIME_INSTANCE: own,
        AGENT_IMAGE: DEFAULT_AGENT_IMAGE,
        AGENT_PORT_RANGE: '38000-38999',
        SMTP_URL: mailbox.url,
        BILLING_PROVIDER: 'stripe',
        STRIPE_SECRET_KEY: stripe.secretKey,
        STRIPE_API_BASE: stripe.url,
        STRIPE_WEBHOOK_SECRET: webhookSecret,
        STRIPE_PRICE_SOLO: 'price_solo_monthly',
        STRIPE_PRICE_COLLECTIVE: 'price_collective_monthly',
      },
      { listenTimeoutMs: 180_000 },
    );
    const web = new WebClient(platform.webUrl, platform.env.PUBLIC_BASE_URL!);
    let owner = '';
    let agentId: string | undefined;
    const backend = (method: string, path: string) =>
      fetch(`${platform.backendUrl}${path}`, {
        method,
        headers: { authorization: `Bearer ${platform.env.INTERNAL_API_KEY}`, 'x-user-id': owner },
        signal: AbortSignal.timeout(60_000),
      });
    t.teardown(async () => {
      if (agentId) await backend('DELETE', `/api/agents/${agentId}`).catch(() => undefined);
      await platform.stop();
      await removeOurs();
    });

    // 1. Register, sign in, verify the address from the mail.
    const joined = await registerAndVerify(web, mailbox, uniqueEmail('stripe-journey'), 'a journey password');
    owner = joined.userId;
    t.equal(joined.registered, 201, 'registered');
    t.equal(joined.login, 200, 'signed in');
    t.ok(joined.link, 'the mail links to {PUBLIC_BASE_URL}/verify-email?token=…');
    t.equal(joined.verified, 200, 'verified');
    t.match(joined.after, { id: joined.userId, emailVerified: true }, 'the session shows the address verified');

    // 2. Checkout at Stripe: the platform asks Stripe for a Checkout Session and sends the user there.
    const home = platform.env.PUBLIC_BASE_URL!.replace(/\/$/, '');
    const checkout = await web.request('POST', '/api/billing/checkout', { plan: 'solo' });
    t.equal(checkout.status, 200, 'a checkout for solo');
    const { url } = (await checkout.json()) as { url: string };
    t.ok(url.startsWith(`${stripe.url}/c/pay/cs_test_`), "Stripe's checkout page");
    const created = stripe.requests.filter((r) => r.path === '/v1/checkout/sessions').at(-1);
    t.has(
      created?.form,
      {
        mode: 'subscription',
        client_reference_id: joined.userId,
        line_items: [{ price: 'price_solo_monthly', quantity: '1' }],
        success_url: `${home}/dashboard?checkout=success&session_id={CHECKOUT_SESSION_ID}`,
        cancel_url: `${home}/dashboard?checkout=cancel`,
      },
      'for the solo price, back to the dashboard',
    );
    const sessionId = url.split('/').at(-1)!;
    t.has(
      await (await web.request('GET', `/api/checkout/verify?session_id=${sessionId}`)).json(),
      { sessionId, status: 'open', plan: 'solo' },
      'open until paid',
    );

    // 3. The user pays; Stripe sends its signed events to the platform's webhook at the edge.
    const events = stripe.pay(sessionId);
    t.same(
      events.map((e) => e.type),
      ['checkout.session.completed', 'customer.subscription.created'],
      'the events Stripe sends for a paid subscription',
    );
    for (const event of events) {
      const delivered = await deliverStripeEvent(platform.webUrl, webhookSecret, event);
      t.equal(delivered.status, 200, `${event.type as string} accepted`);
      t.same(await delivered.json(), { received: true, duplicate: false });
    }
    const again = await deliverStripeEvent(platform.webUrl, webhookSecret, events[0]);
    t.same(await again.json(), { received: true, duplicate: true }, 'an event Stripe sends twice counts once');
    const forged = await deliverStripeEvent(platform.webUrl, `whsec_${randomBytes(24).toString('hex')}`, {
      ...events[1],
      id: 'evt_forged',
    });
    t.equal(forged.status, 400, 'an event signed with another secret is refused');
    t.has(
      await (await web.request('GET', `/api/checkout/verify?session_id=${sessionId}`)).json(),
      { sessionId, status: 'complete', plan: 'solo' },
      'the return page sees it paid',
    );
    t.has(
      await (await web.request('GET', '/api/billing')).json(),
      { plan: 'solo', subscription: { status: 'active', plan: 'solo', cancelAtPeriodEnd: false } },
      'solo, active',
    );

    // 4. The plan lets an agent be provisioned; it is removed again (its thinking: the local-checkout journey).
    const provisioned = await web.request('POST', '/api/agents/provision', { name: 'Zinnia' });
    t.equal(provisioned.status, 201, 'provisioning accepted');
    const { agent } = (await provisioned.json()) as { agent: { id: string; status: string } };
    agentId = agent.id;
    t.equal(agent.status, 'provisioning');
    const removed = await backend('DELETE', `/api/agents/${agent.id}`);
    t.same(await removed.json(), { id: agent.id, deleted: true });
    agentId = undefined;
    // The provisioning job may still be under way when the agent is deleted: its container must not outlive it.
    t.same(
      await observe(ours, (c) => c.length === 0, { everyMs: 1000, deadlineMs: 180_000, what: 'no container left' }),
      [],
      'no container left',
    );
  },
);
