import Stripe from 'stripe';
import { isVerificationMail, type startMailServer, unfold, verificationTokenIn } from '@agentyard/testing';

/** A web client of the platform's web surface: JSON bodies, the session cookie once signed in, the console's Origin on writes. */
export class WebClient {
  private cookie: string | undefined;
  private readonly baseUrl: string;
  private readonly origin: string;

  readonly publicBaseUrl: string;

  constructor(baseUrl: string, publicBaseUrl: string) {
    this.baseUrl = baseUrl;
    this.publicBaseUrl = publicBaseUrl;
    this.origin = new URL(publicBaseUrl).origin;
  }

  /** `body` as JSON; `headers` added (a `content-type` among them sends a string `body` as it is); `timeoutMs` for slow answers such as an agent's turn. */
  async request(
    method: string,
    path: string,
    body?: unknown,
    { headers = {}, timeoutMs = 30_000 }: { headers?: Record<string, string>; timeoutMs?: number } = {},
  ): Promise<Response> {
    if (typeof body === 'string' && headers['content-type'])
      return this.send(method, path, body, headers, this.origin, timeoutMs);
    return this.send(
      method,
      path,
      body === undefined ? undefined : JSON.stringify(body),
      { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      this.origin,
      timeoutMs,
    );
  }

  /**
   * What a browser sends when the user presses a page's button (a plain form without fields, posted
   * to `path`): the form's content type, the page's Origin, `sec-fetch-site`, and the session cookie.
   * `origin` stands in for a page on another site. Redirects are answered, not followed.
   */
  submitForm(path: string, origin = this.origin): Promise<Response> {
    return this.send(
      'POST',
      path,
      '',
      {
        'content-type': 'application/x-www-form-urlencoded',
        'sec-fetch-site': origin === this.origin ? 'same-origin' : 'cross-site',
      },
      origin,
    );
  }

  private async send(
    method: string,
    path: string,
    body: string | undefined,
    extra: Record<string, string>,
    origin = this.origin,
    timeoutMs = 30_000,
  ): Promise<Response> {
    const headers = new Headers({ ...extra, origin });
    if (this.cookie) headers.set('cookie', this.cookie);
    const response = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers,
      body,
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
    });
    const session = response.headers.getSetCookie().find((c) => c.startsWith('agentyard-session='));
    if (session) this.cookie = session.split(';')[0];
    return response;
  }

  get signedIn(): boolean {
    return this.cookie !== undefined;
  }
}

/** A Stripe event, signed with `webhookSecret` and sent to the platform's Stripe webhook as Stripe sends it. */
export function deliverStripeEvent(webUrl: string, webhookSecret: string, event: unknown): Promise<Response> {
  const payload = JSON.stringify(event);
  const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret: webhookSecret });
  return fetch(`${webUrl}/api/webhooks/stripe`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'stripe-signature': signature },
    body: payload,
    signal: AbortSignal.timeout(30_000),
  });
}

/**
 * Asks `read` until it answers something `done` accepts, every `everyMs`, and fails after `deadlineMs`
 * with the last answer: for what the API offers no event for (an agent's status, batched usage rows).
 */
export async function observe<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  { everyMs, deadlineMs, what }: { everyMs: number; deadlineMs: number; what: string },
): Promise<T> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline)
      throw new Error(`${what}: not seen within ${deadlineMs} ms (last: ${JSON.stringify(value)})`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/**
 * Registers, signs in, and verifies the address from the mail the platform sent to `mailbox`:
 * what a new user does first. Answers the user's id and the steps' statuses for the test to assert.
 */
export async function registerAndVerify(
  web: WebClient,
  mailbox: Awaited<ReturnType<typeof startMailServer>>,
  email: string,
  password: string,
) {
  const mailed = mailbox.nextMail((mail) => isVerificationMail(mail) && mail.to.includes(email.toLowerCase()));
  const registered = await web.request('POST', '/api/register', { email, password, name: 'Journey' });
  const { id: userId } = (await registered.json()) as { id: string };
  const login = await web.request('POST', '/api/auth/login', { email, password });
  const before = (
    (await (await web.request('GET', '/api/auth/session')).json()) as { user: { emailVerified: boolean } | null }
  ).user;
  const mail = await withDeadline(mailed, 120_000, 'the verification mail');
  const token = verificationTokenIn(mail.raw)!;
  const link = unfold(mail.raw).includes(`${web.publicBaseUrl.replace(/\/$/, '')}/verify-email?token=${token}`);
  const verified = await web.request('POST', '/api/auth/verify-email', { token });
  const after = (
    (await (await web.request('GET', '/api/auth/session')).json()) as {
      user: { id: string; emailVerified: boolean } | null;
    }
  ).user;
  return { userId, registered: registered.status, login: login.status, before, link, verified: verified.status, after };
}

/** `promise`, or a rejection naming `what` after `ms`. */
export function withDeadline<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not seen within ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** Subscribes the signed-in user to `plan` at the development checkout, pressing its button as the browser does; answers the final status (303). */
export async function payAtLocalCheckout(web: WebClient, plan: string): Promise<number> {
  const checkout = await web.request('POST', '/api/billing/checkout', { plan });
  if (checkout.status !== 200) return checkout.status;
  const { url } = (await checkout.json()) as { url: string };
  return (await web.submitForm(new URL(url).pathname)).status;
}

/** An agent-status event of the owner's stream: a status change, or how a web operation ended. */
export interface StatusEvent {
  agentId: string;
  status: string;
  action?: string;
  outcome?: 'done' | 'failed';
  error?: string;
}

/** The signed-in user's GET /api/events through the edge: `next(match)` resolves with the first matching agent-status event from now on. */
export async function agentStatusEvents(web: WebClient) {
  const res = await web.request('GET', '/api/events', undefined, {
    headers: { accept: 'text/event-stream' },
    timeoutMs: 1_400_000,
  });
  if (res.status !== 200 || !res.body) throw new Error(`GET /api/events answered ${res.status}`);
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  const waiting = new Set<{ match: (e: StatusEvent) => boolean; resolve: (e: StatusEvent) => void }>();
  let ready!: () => void;
  const listening = new Promise<void>((resolve) => (ready = resolve));
  void (async () => {
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
      if (done) return;
      buffer += value;
      for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const name = /^event: (.*)$/m.exec(block)?.[1];
        if (name === 'ready') ready();
        if (name !== 'agent-status') continue;
        const event = JSON.parse(/^data: (.*)$/m.exec(block)![1]!) as StatusEvent;
        for (const w of waiting)
          if (w.match(event)) {
            waiting.delete(w);
            w.resolve(event);
          }
      }
    }
  })();
  await withDeadline(listening, 30_000, 'the event stream listening');
  return {
    next: (match: (e: StatusEvent) => boolean, ms: number, what: string) =>
      withDeadline(new Promise<StatusEvent>((resolve) => waiting.add({ match, resolve })), ms, what),
    close: () => reader.cancel().catch(() => undefined),
  };
}
