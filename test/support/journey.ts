import Stripe from 'stripe';
import { randomBytes } from 'node:crypto';

/** A web client of the platform's web surface: JSON bodies, the session cookie once signed in, the console's Origin on writes. */
export class WebClient {
  private cookie: string | undefined;
  private readonly baseUrl: string;
  private readonly origin: string;

  constructor(baseUrl: string, publicBaseUrl: string) {
    this.baseUrl = baseUrl;
    this.origin = new URL(publicBaseUrl).origin;
  }

  async request(method: string, path: string, body?: unknown): Promise<Response> {
    const headers = new Headers({ origin: this.origin });
    if (body !== undefined) headers.set('content-type', 'application/json');
    if (this.cookie) headers.set('cookie', this.cookie);
    const response = await fetch(`${this.baseUrl}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal: AbortSignal.timeout(30_000) });
    const session = response.headers.getSetCookie().find((c) => c.startsWith('agentyard-session='));
    if (session) this.cookie = session.split(';')[0];
    return response;
  }

  get signedIn(): boolean {
    return this.cookie !== undefined;
  }
}

/**
 * The subscription a real Stripe event would give the user: a signed `customer.subscription.created`
 * for `plan`, sent to the platform's Stripe webhook as Stripe sends it. (The checkout flow takes its
 * place once billing has one.)
 */
export async function subscribeThroughStripeWebhook(webUrl: string, webhookSecret: string, userId: string, plan: string): Promise<Response> {
  const now = Math.floor(Date.now() / 1000);
  const event = {
    id: `evt_${randomBytes(12).toString('hex')}`, object: 'event', type: 'customer.subscription.created', created: now,
    api_version: '2025-01-01', livemode: false, pending_webhooks: 1, request: null,
    data: {
      object: {
        id: `sub_${randomBytes(12).toString('hex')}`, object: 'subscription', customer: `cus_${randomBytes(8).toString('hex')}`, status: 'active',
        metadata: { userId },
        items: { object: 'list', data: [{ object: 'subscription_item', price: { object: 'price', lookup_key: plan, metadata: {} }, current_period_end: now + 30 * 86_400 }] },
      },
    },
  };
  const payload = JSON.stringify(event);
  const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret: webhookSecret });
  return fetch(`${webUrl}/api/webhooks/stripe`, {
    method: 'POST', headers: { 'content-type': 'application/json', 'stripe-signature': signature }, body: payload, signal: AbortSignal.timeout(30_000),
  });
}

/**
 * Asks `read` until it answers something `done` accepts, every `everyMs`, and fails after `deadlineMs`
 * with the last answer: for what the API offers no event for (an agent's status, batched usage rows).
 */
export async function observe<T>(read: () => Promise<T>, done: (value: T) => boolean, { everyMs, deadlineMs, what }: { everyMs: number; deadlineMs: number; what: string }): Promise<T> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not seen within ${deadlineMs} ms (last: ${JSON.stringify(value)})`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
