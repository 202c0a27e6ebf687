import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local server speaking the part of the Stripe API the platform uses (the official `stripe`
 * client is pointed at it with STRIPE_API_BASE): customers, Checkout Sessions, customer portal
 * sessions, prices and portal configurations. Form-encoded requests with Stripe's bracket notation, Stripe's JSON objects, its error
 * shape and status codes, bearer secret-key auth. It also plays the payer: `pay()` completes a
 * session and answers the events Stripe would send for it (the caller signs and delivers them).
 */

export type StripeForm = { [key: string]: string | StripeForm | StripeForm[] | string[] };

export interface StripeRequest {
  method: string;
  path: string;
  form: StripeForm;
  idempotencyKey: string | undefined;
}

export interface StripeServer {
  /** STRIPE_API_BASE for the client. */
  url: string;
  secretKey: string;
  /** Every API request received, in order (parsed form bodies). */
  requests: StripeRequest[];
  sessions: Map<string, Record<string, unknown>>;
  /** Customer portal configurations made through the API, by id. */
  portalConfigurations: Map<string, Record<string, unknown>>;
  /**
   * The payer completes a Checkout Session: it becomes `complete` (and `paid`); answers the events
   * Stripe sends for it (subscription: checkout.session.completed and customer.subscription.created;
   * payment: checkout.session.completed), unsigned.
   */
  pay(sessionId: string): Record<string, unknown>[];
  /** The events of a full refund of a paid payment session (charge.refunded) or a dispute (charge.dispute.created). */
  refund(sessionId: string, amountCents?: number): Record<string, unknown>;
  dispute(sessionId: string, amountCents?: number): Record<string, unknown>;
  close(): Promise<void>;
}

const id = (prefix: string) => `${prefix}_${randomBytes(12).toString('hex')}`;
const now = () => Math.floor(Date.now() / 1000);

/** `a[b][0][c]=v` pairs into nested objects and arrays, as Stripe reads them. */
export function parseStripeForm(body: string): StripeForm {
  const root: Record<string, unknown> = {};
  for (const [key, value] of new URLSearchParams(body)) {
    const path = key.replace(/\]/g, '').split('[');
    let node: Record<string, unknown> = root;
    path.forEach((part, i) => {
      if (i === path.length - 1) node[part] = value;
      else node = (node[part] ??= /^\d+$/.test(path[i + 1]!) ? [] : {}) as Record<string, unknown>;
    });
  }
  return root as StripeForm;
}

function stripeError(res: ServerResponse, status: number, error: Record<string, string>) {
  res.writeHead(status, { 'content-type': 'application/json', 'request-id': id('req') });
  res.end(JSON.stringify({ error }));
}

function event(type: string, object: Record<string, unknown>): Record<string, unknown> {
  return {
    id: id('evt'),
    object: 'event',
    api_version: '2025-01-27.acacia',
    created: now(),
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type,
    data: { object },
  };
}

/** `prices`: the account's prices, price id to product id (GET /v1/prices/:id answers them; others are missing). */
export async function startStripeServer(options: { prices?: Record<string, string> } = {}): Promise<StripeServer> {
  const secretKey = `sk_test_${randomBytes(16).toString('hex')}`;
  const requests: StripeRequest[] = [];
  const sessions = new Map<string, Record<string, unknown>>();
  const portalConfigurations = new Map<string, Record<string, unknown>>();
  const prices = new Map(Object.entries(options.prices ?? {}));
  const customers = new Map<string, Record<string, unknown>>();
  let base = '';

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const form = parseStripeForm(Buffer.concat(chunks).toString('utf8'));
    const path = new URL(req.url ?? '/', 'http://stripe.local').pathname;
    const method = req.method ?? 'GET';
    if (req.headers.authorization !== `Bearer ${secretKey}`) {
      return stripeError(res, 401, { type: 'invalid_request_error', message: 'Invalid API Key provided' });
    }
    const idempotencyKey =
      typeof req.headers['idempotency-key'] === 'string' ? req.headers['idempotency-key'] : undefined;
    requests.push({ method, path, form, idempotencyKey });
    const send = (object: Record<string, unknown>) => {
      res.writeHead(200, { 'content-type': 'application/json', 'request-id': id('req') });
      res.end(JSON.stringify(object));
    };

    if (method === 'POST' && path === '/v1/customers') {
      const customer = {
        id: id('cus'),
        object: 'customer',
        created: now(),
        email: form.email ?? null,
        metadata: form.metadata ?? {},
        livemode: false,
      };
      customers.set(customer.id, customer);
      return send(customer);
    }
    if (method === 'POST' && path === '/v1/checkout/sessions') {
      const mode = form.mode as string;
      if (!['subscription', 'payment'].includes(mode))
        return stripeError(res, 400, {
          type: 'invalid_request_error',
          code: 'parameter_invalid_empty',
          param: 'mode',
          message: 'Invalid mode',
        });
      const items = (form.line_items ?? []) as StripeForm[];
      if (!Array.isArray(items) || items.length === 0)
        return stripeError(res, 400, {
          type: 'invalid_request_error',
          code: 'parameter_missing',
          param: 'line_items',
          message: 'Missing required param: line_items.',
        });
      if (!form.success_url)
        return stripeError(res, 400, {
          type: 'invalid_request_error',
          code: 'parameter_missing',
          param: 'success_url',
          message: 'Missing required param: success_url.',
        });
      if (form.customer && !customers.has(form.customer as string))
        return stripeError(res, 400, {
          type: 'invalid_request_error',
          code: 'resource_missing',
          param: 'customer',
          message: `No such customer: '${form.customer}'`,
        });
      const priceData = items[0]!.price_data as StripeForm | undefined;
      const amount = priceData ? Number(priceData.unit_amount) * Number(items[0]!.quantity ?? 1) : null;
      const sessionId = id('cs_test');
      const session = {
        id: sessionId,
        object: 'checkout.session',
        mode,
        status: 'open',
        payment_status: 'unpaid',
        livemode: false,
        created: now(),
        client_reference_id: form.client_reference_id ?? null,
        customer: form.customer ?? null,
        customer_email: form.customer_email ?? null,
        customer_details: null,
        metadata: form.metadata ?? {},
        success_url: form.success_url,
        cancel_url: form.cancel_url ?? null,
        amount_total: amount,
        currency: priceData ? priceData.currency : 'gbp',
        subscription: null,
        payment_intent: null,
        url: `${base}/c/pay/${sessionId}`,
        line_items_requested: items,
        subscription_data: form.subscription_data ?? null,
      };
      sessions.set(sessionId, session);
      const { line_items_requested: _items, subscription_data: _data, ...visible } = session;
      return send(visible);
    }
    const retrieve = /^\/v1\/checkout\/sessions\/([^/]+)$/.exec(path);
    if (method === 'GET' && retrieve) {
      const session = sessions.get(decodeURIComponent(retrieve[1]!));
      if (!session)
        return stripeError(res, 404, {
          type: 'invalid_request_error',
          code: 'resource_missing',
          param: 'session',
          message: `No such checkout.session: '${retrieve[1]}'`,
        });
      const { line_items_requested: _items, subscription_data: _data, ...visible } = session;
      return send(visible);
    }
    const price = /^\/v1\/prices\/([^/]+)$/.exec(path);
    if (method === 'GET' && price) {
      const priceId = decodeURIComponent(price[1]!);
      const product = prices.get(priceId);
      if (!product)
        return stripeError(res, 404, {
          type: 'invalid_request_error',
          code: 'resource_missing',
          param: 'price',
          message: `No such price: '${priceId}'`,
        });
      return send({
        id: priceId,
        object: 'price',
        active: true,
        product,
        currency: 'gbp',
        type: 'recurring',
        livemode: false,
        metadata: {},
      });
    }
    if (method === 'GET' && path === '/v1/billing_portal/configurations') {
      const data = [...portalConfigurations.values()];
      return send({ object: 'list', data, has_more: false, url: path });
    }
    if (method === 'POST' && path === '/v1/billing_portal/configurations') {
      const configuration = {
        id: id('bpc'),
        object: 'billing_portal.configuration',
        active: true,
        is_default: false,
        livemode: false,
        created: now(),
        features: form.features ?? {},
        metadata: form.metadata ?? {},
      };
      portalConfigurations.set(configuration.id, configuration);
      return send(configuration);
    }
    if (method === 'POST' && path === '/v1/billing_portal/sessions') {
      if (!customers.has(form.customer as string))
        return stripeError(res, 400, {
          type: 'invalid_request_error',
          code: 'resource_missing',
          param: 'customer',
          message: `No such customer: '${form.customer}'`,
        });
      if (form.configuration && !portalConfigurations.has(form.configuration as string))
        return stripeError(res, 400, {
          type: 'invalid_request_error',
          code: 'resource_missing',
          param: 'configuration',
          message: `No such configuration: '${form.configuration}'`,
        });
      const portalId = id('bps');
      return send({
        id: portalId,
        object: 'billing_portal.session',
        created: now(),
        customer: form.customer,
        livemode: false,
        return_url: form.return_url ?? null,
        configuration: form.configuration ?? null,
        url: `${base}/p/session/${portalId}`,
      });
    }
    return stripeError(res, 404, {
      type: 'invalid_request_error',
      message: `Unrecognized request URL (${method}: ${path}).`,
    });
  }

  const server = createServer((req, res) => {
    handle(req, res).catch(() => stripeError(res, 500, { type: 'api_error', message: 'local Stripe server failed' }));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const paid = (sessionId: string) => {
    const session = sessions.get(sessionId);
    if (!session) throw new Error(`no session ${sessionId}`);
    return session;
  };
  const chargeOf = (session: Record<string, unknown>, refunded: number) => ({
    id: `ch_${(session.payment_intent as string).slice(3)}`,
    object: 'charge',
    amount: session.amount_total,
    amount_refunded: refunded,
    refunded: refunded === session.amount_total,
    currency: session.currency,
    customer: session.customer,
    payment_intent: session.payment_intent,
    status: 'succeeded',
    metadata: {},
  });

  return {
    url: base,
    secretKey,
    requests,
    sessions,
    portalConfigurations,
    pay(sessionId) {
      const session = paid(sessionId);
      const customer = customers.get(session.customer as string);
      Object.assign(session, {
        status: 'complete',
        payment_status: 'paid',
        customer_details: { email: customer?.email ?? session.customer_email ?? null },
      });
      const {
        line_items_requested: items,
        subscription_data: data,
        ...visible
      } = session as Record<string, unknown> & {
        line_items_requested: StripeForm[];
        subscription_data: StripeForm | null;
      };
      if (session.mode === 'payment') {
        session.payment_intent = id('pi');
        return [event('checkout.session.completed', { ...visible, payment_intent: session.payment_intent })];
      }
      const subscriptionId = id('sub');
      session.subscription = subscriptionId;
      const periodEnd = now() + 30 * 86400;
      const price = items[0]!.price as string;
      const subscription = {
        id: subscriptionId,
        object: 'subscription',
        status: 'active',
        customer: session.customer,
        cancel_at_period_end: false,
        created: now(),
        metadata: (data?.metadata as StripeForm | undefined) ?? {},
        livemode: false,
        items: {
          object: 'list',
          data: [
            {
              id: id('si'),
              object: 'subscription_item',
              current_period_end: periodEnd,
              price: { id: price, object: 'price', lookup_key: null, metadata: {} },
            },
          ],
        },
      };
      return [
        event('checkout.session.completed', { ...visible, subscription: subscriptionId }),
        event('customer.subscription.created', subscription),
      ];
    },
    refund(sessionId, amountCents) {
      const session = paid(sessionId);
      return event('charge.refunded', chargeOf(session, amountCents ?? (session.amount_total as number)));
    },
    dispute(sessionId, amountCents) {
      const session = paid(sessionId);
      return event('charge.dispute.created', {
        id: id('dp'),
        object: 'dispute',
        amount: amountCents ?? session.amount_total,
        currency: session.currency,
        reason: 'fraudulent',
        status: 'needs_response',
        charge: chargeOf(session, 0).id,
        payment_intent: session.payment_intent,
      });
    },
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}
