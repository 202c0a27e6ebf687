import t from 'tap';
import { randomBytes } from 'node:crypto';
import { DEFAULT_AGENT_IMAGE, LABELS } from '@agentyard/runtime';
import { startLocalProviders, startMailServer, startWholePlatform, systemDb, uniqueEmail } from '@agentyard/testing';
import { noAgentContainers, runContainers } from './support/containers.ts';
import { observe, registerAndVerify, WebClient } from './support/journey.ts';

// A paying user's whole journey on the platform as `npm start` runs it (every service and worker,
// the edge with its agent listener, the development billing provider, the real OpenClaw image in
// the container engine), with a real SMTP server for the platform's mail and a local server
// speaking OpenAI's chat-completions wire format as the AI gateway's only provider: sign up, verify
// the address from the mail, pay at the development checkout, provision, prompt the agent, see what
// its thinking cost, and stay within a budget. Heavy (~1.4 GB, a core for a minute while the
// gateway boots): one agent, removed when the test ends. The same journey with the Stripe provider:
// paying-user-journey-stripe.test.ts.
t.setTimeout(1_500_000);

const skip = noAgentContainers;

t.test(
  'a new user verifies, pays, gets an agent that thinks through the edge, sees its cost, and is held to a budget',
  { skip },
  async (t) => {
    const { own, ours, removeOurs } = runContainers();
    const model = await startLocalProviders(t);
    const mailbox = await startMailServer(t);
    const platform = await startWholePlatform(
      {
        RUNTIME_INSTANCE: own,
        AGENT_IMAGE: DEFAULT_AGENT_IMAGE,
        AGENT_PORT_RANGE: '37000-37999',
        AGENT_READY_TIMEOUT_MS: '420000',
        // The only provider of the AI gateway: the local OpenAI-wire server.
        OPENAI_BASE_URL: model.env.OPENAI_BASE_URL,
        OPENAI_API_KEY: model.env.OPENAI_API_KEY,
        // The platform's mail (the verification link) goes to the test's SMTP server; billing is the development provider.
        SMTP_URL: mailbox.url,
        BILLING_PROVIDER: 'local',
        LOG_LEVEL: 'info',
      },
      { logsOf: ['edge'], listenTimeoutMs: 180_000 },
    );
    const web = new WebClient(platform.webUrl, platform.env.PUBLIC_BASE_URL!);
    let owner = '';
    let agentId: string | undefined;
    // The platform's own backend caller (internal API key) removes the agent, as an operator would.
    const backend = (method: string, path: string, body?: unknown, claims: Record<string, string> = {}) =>
      fetch(`${platform.backendUrl}${path}`, {
        method,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(60_000),
        headers: {
          authorization: `Bearer ${platform.env.INTERNAL_API_KEY}`,
          'x-user-id': owner,
          ...claims,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
      });
    t.teardown(async () => {
      if (agentId) await backend('DELETE', `/api/agents/${agentId}`).catch(() => undefined);
      await platform.stop();
      await removeOurs();
    });
    t.ok(platform.agentUrl, `the edge's agent listener: ${platform.agentUrl}`);
    t.notMatch(platform.agentUrl!, /\/\/(127\.|localhost)/, "on the host's own address, not loopback");

    // 1. Register, sign in, and verify the address from the link the platform mailed.
    const email = uniqueEmail('journey');
    const joined = await registerAndVerify(web, mailbox, email, 'a journey password');
    owner = joined.userId;
    t.equal(joined.registered, 201, 'registered');
    t.equal(joined.login, 200, 'signed in');
    t.ok(web.signedIn, 'with the session cookie');
    t.equal(joined.before?.emailVerified, false, 'the address is not verified yet');
    t.ok(joined.link, 'the mail links to {PUBLIC_BASE_URL}/verify-email?token=…');
    t.equal(joined.verified, 200, 'the mailed token verifies the address');
    t.match(joined.after, { id: joined.userId, emailVerified: true }, 'the session shows the address verified');

    // Without a plan nothing can be provisioned.
    const refused = await web.request('POST', '/api/agents/provision', { name: 'Too early' });
    t.equal(refused.status, 403);
    t.equal(((await refused.json()) as { code: string }).code, 'SUBSCRIPTION_REQUIRED', 'no subscription, no agent');

    // 2. Subscribe to solo at the development checkout, as the browser does.
    const home = platform.env.PUBLIC_BASE_URL!.replace(/\/$/, '');
    const checkout = await web.request('POST', '/api/billing/checkout', { plan: 'solo' });
    t.equal(checkout.status, 200, 'a checkout for solo');
    const { url: checkoutUrl } = (await checkout.json()) as { url: string };
    t.match(
      checkoutUrl,
      new RegExp(`^${home.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/api/billing/local-checkout/[^/]+$`),
      'on the platform itself',
    );
    const checkoutPath = new URL(checkoutUrl).pathname;
    const page = await web.request('GET', checkoutPath);
    t.equal(page.status, 200);
    const html = await page.text();
    t.match(html, /DEVELOPMENT checkout/, 'the page says it is a development checkout');
    t.match(html, /Plan: <strong>solo<\/strong> — £29 per month/, 'it names the plan and its price');
    t.ok(html.includes(`<form method="post" action="${checkoutUrl}">`), 'its button posts to the same URL');
    const forged = await web.submitForm(checkoutPath, 'https://evil.example');
    t.equal(forged.status, 403, 'the same button on another site is refused by the edge');
    t.same(await forged.json(), { error: 'Cross-site request refused', code: 'CSRF' });
    t.match(await (await web.request('GET', '/api/billing')).json(), { subscription: null }, 'and bought nothing');
    const paid = await web.submitForm(checkoutPath);
    t.equal(paid.status, 303, 'the button completes the checkout');
    t.equal(
      paid.headers.get('location'),
      `${home}/dashboard?checkout=success`,
      'and sends the browser back to the dashboard',
    );
    t.has(
      await (await web.request('GET', '/api/billing')).json(),
      {
        plan: 'solo',
        subscription: { status: 'active', plan: 'solo', cancelAtPeriodEnd: false },
        usage: { monthUsd: 0 },
      },
      'solo, active',
    );

    // 3. Provision, and wait for the agent to run.
    const provisionedAt = Date.now();
    const provisioned = await web.request('POST', '/api/agents/provision', { name: 'Marigold' });
    t.equal(provisioned.status, 201, 'provisioning accepted');
    const { agent } = (await provisioned.json()) as { agent: { id: string; status: string } };
    agentId = agent.id;
    t.equal(agent.status, 'provisioning');
    // Once a second, within the web surface's rate limit on /api/agents (100 a minute); a 429 is asked again.
    const status = async () => {
      const res = await web.request('GET', `/api/agents/${agent.id}`);
      return res.status === 200
        ? ((await res.json()) as { agent: { status: string } }).agent.status
        : `HTTP ${res.status}`;
    };
    const settled = await observe(status, (s) => s !== 'provisioning' && s !== 'HTTP 429', {
      everyMs: 1000,
      deadlineMs: 540_000,
      what: 'the agent leaving provisioning',
    });
    if (!t.equal(settled, 'running', 'the agent runs')) return;
    const provisioningMs = Date.now() - provisionedAt;
    t.comment(`provisioning → running: ${provisioningMs} ms`);
    const containers = await ours();
    t.same(
      containers.map((c) => [c.Image, c.State, c.Labels[LABELS.agentId]]),
      [[DEFAULT_AGENT_IMAGE, 'running', agent.id]],
      'one container of the real OpenClaw image',
    );

    // 4. A prompt reaches the agent through the scheduler's hook delivery; the agent asks the AI gateway.
    const word = `marigold-${randomBytes(4).toString('hex')}`;
    const prompt = `Answer with the single word ${word}.`;
    const second = new Date(Date.now() + 5000).getUTCSeconds();
    const promptedAt = Date.now();
    const scheduled = await web.request('POST', '/api/scheduled-tasks', {
      name: 'Say the word',
      cronSchedule: `${second} * * * * *`,
      prompt,
      agentId: agent.id,
    });
    t.equal(scheduled.status, 201, 'a prompt scheduled for the agent');
    const { id: taskId } = (await scheduled.json()) as { id: string };
    const delivered = await model.delivery((d) => JSON.stringify(d.body.messages ?? []).includes(word), 300_000);
    const modelCallMs = Date.now() - promptedAt;
    t.comment(`prompt scheduled → the model server got the agent's call: ${modelCallMs} ms`);
    // Once is enough: the next firing is a minute away.
    t.equal(
      (await web.request('PUT', '/api/scheduled-tasks', { taskId, enabled: false })).status,
      200,
      'the schedule is stopped',
    );

    t.equal(delivered.path, '/openai/v1/chat/completions', 'the OpenAI-wire provider got it');
    t.equal(
      delivered.body.model,
      'gpt-4o-mini',
      'on the model the solo plan picks among the usable ones (openai/gpt-4o-mini)',
    );
    t.equal(
      delivered.headers.authorization,
      `Bearer ${model.env.OPENAI_API_KEY}`,
      "with the platform's provider key, never the agent's",
    );
    const messages = delivered.body.messages as { role: string; content: unknown }[];
    t.ok(
      messages.some((m) => m.role === 'user' && JSON.stringify(m.content).includes(prompt)),
      "the agent sent the prompt as the user's turn",
    );

    // The edge's agent listener served the agent's call (its requests are logged under its own name).
    const logged = (line: string) => {
      try {
        return JSON.parse(line) as {
          name?: string;
          msg?: string;
          reqId?: string;
          req?: { url?: string };
          res?: { statusCode?: number };
        };
      } catch {
        return {};
      }
    };
    const incoming = logged(
      await platform.logs.waitFor(
        'edge',
        (line) => {
          const entry = logged(line);
          return (
            entry.name === 'edge-agents' &&
            entry.msg === 'incoming request' &&
            entry.req?.url === '/v1/chat/completions'
          );
        },
        30_000,
      ),
    );
    const completed = logged(
      await platform.logs.waitFor(
        'edge',
        (line) => {
          const entry = logged(line);
          return entry.name === 'edge-agents' && entry.msg === 'request completed' && entry.reqId === incoming.reqId;
        },
        120_000,
      ),
    );
    t.equal(completed.res?.statusCode, 200, "the agent listener answered the agent's chat completion");

    // The agent got its answer: the gateway's transcript shows it.
    const answered = await observe(
      async () =>
        (await (await web.request('GET', `/api/agents/${agent.id}/messages`)).json()) as {
          messages?: { role: string; text: string }[];
        },
      (m) => (m.messages ?? []).some((x) => x.role === 'assistant' && x.text.includes('Hello from the local provider')),
      { everyMs: 1000, deadlineMs: 180_000, what: "the agent's answer" },
    );
    t.ok(answered, "the agent's answer is in its transcript");
    const turnMs = Date.now() - promptedAt;
    t.comment(`prompt scheduled → answer in the transcript: ${turnMs} ms`);

    // 5. What the thinking cost, for that agent, as the user sees it.
    type Summary = {
      agentId: string | null;
      usage: { inputTokens: number; outputTokens: number; totalTokens: number; costUsd: number; calls: number };
    };
    const calls = () => model.delivered.filter((d) => d.path === '/openai/v1/chat/completions').length;
    const summary = await observe(
      async () => (await (await web.request('GET', `/api/usage/summary?agentId=${agent.id}&days=1`)).json()) as Summary,
      (s) => s.usage?.calls >= 1 && s.usage.calls === calls(),
      { everyMs: 500, deadlineMs: 60_000, what: "the agent's usage" },
    );
    t.equal(summary.agentId, agent.id);
    const n = summary.usage.calls;
    t.match(
      summary.usage,
      { inputTokens: 11 * n, outputTokens: 7 * n, totalTokens: 18 * n },
      `the tokens of the agent's ${n} call(s), as the provider counted them`,
    );
    t.ok(summary.usage.costUsd > 0, `and their cost: ${summary.usage.costUsd} USD`);
    const everything = (await (await web.request('GET', '/api/usage/summary?days=1')).json()) as Summary;
    t.same(everything.usage.calls, n, "the user's own usage is the agent's");

    type Billing = {
      plan: string;
      usage: { monthUsd: number; includedUsd: number };
      limits: { monthlyUsd: number | null };
    };
    const billed = await observe(
      async () => (await (await web.request('GET', '/api/billing')).json()) as Billing,
      (b) => b.usage?.monthUsd > 0,
      { everyMs: 500, deadlineMs: 60_000, what: "the month's usage in billing" },
    );
    // The usage summary rounds to millionths of a dollar; billing keeps the exact sum.
    t.ok(
      Math.abs(billed.usage.monthUsd - summary.usage.costUsd) <= 5e-7,
      `billing shows the month's AI spend: ${billed.usage.monthUsd} USD of ${billed.usage.includedUsd} included`,
    );

    // 6. A limit below what is already spent: the agent's next call is refused before any provider sees it.
    const tiny = 0.000001;
    t.ok(summary.usage.costUsd > tiny, 'the limit is below what was spent');
    const limited = await web.request('PUT', '/api/billing/limits', { monthlyUsd: tiny, agents: [] });
    t.equal(limited.status, 200, 'a monthly limit set');
    t.same(await limited.json(), { monthlyUsd: tiny, agents: [] });
    t.match(await (await web.request('GET', '/api/billing')).json(), { limits: { monthlyUsd: tiny } });
    const callsBefore = calls();
    const seenBefore = platform.logs.lines('edge').length;
    const word2 = `zinnia-${randomBytes(4).toString('hex')}`;
    const nextSecond = new Date(Date.now() + 5000).getUTCSeconds();
    const again = await web.request('POST', '/api/scheduled-tasks', {
      name: 'Say another word',
      cronSchedule: `${nextSecond} * * * * *`,
      prompt: `Answer with the single word ${word2}.`,
      agentId: agent.id,
    });
    t.equal(again.status, 201, 'another prompt scheduled for the agent');
    const { id: againId } = (await again.json()) as { id: string };
    // The agent's turn reaches the gateway through the agent listener, which answers 402.
    const refusedCall = logged(
      await platform.logs.waitFor(
        'edge',
        (line) => {
          if (platform.logs.lines('edge').indexOf(line) < seenBefore) return false;
          const entry = logged(line);
          return entry.name === 'edge-agents' && entry.msg === 'request completed' && entry.res?.statusCode === 402;
        },
        300_000,
      ),
    );
    t.equal(refusedCall.res?.statusCode, 402, "the agent listener answered the agent's next chat completion 402");
    t.equal(
      (await web.request('PUT', '/api/scheduled-tasks', { taskId: againId, enabled: false })).status,
      200,
      'the schedule is stopped',
    );
    t.equal(calls(), callsBefore, 'the model server received nothing more');
    t.notOk(
      model.delivered.some((d) => JSON.stringify(d.body.messages ?? []).includes(word2)),
      'not the new prompt',
    );
    // What the user sees: the agent's turn ends on the refusal (OpenClaw words any 402 as a rate limit).
    const transcript = await observe(
      async () =>
        (await (await web.request('GET', `/api/agents/${agent.id}/messages`)).json()) as {
          messages?: { role: string; text: string; timestamp: string }[];
        },
      (m) => (m.messages ?? []).some((x) => x.role === 'assistant' && x.text.includes('HTTP 402')),
      { everyMs: 1000, deadlineMs: 60_000, what: 'the refused turn in the transcript' },
    );
    t.comment(`the transcript's end: ${JSON.stringify((transcript.messages ?? []).at(-1)?.text)}`);
    t.ok(
      transcript.messages?.some((x) => x.role === 'assistant' && x.text.includes('HTTP 402')),
      "the agent's transcript shows its turn refused with 402",
    );
    // The same limit holds on the platform's backend surface for this user, with its code.
    // A backend caller claims the user's plan and names the subscription that pays for it.
    const subscription = await systemDb()
      .selectFrom('subscriptions')
      .select('id')
      .where('user_id', '=', owner)
      .executeTakeFirstOrThrow();
    const direct = await backend(
      'POST',
      '/api/ai/chat',
      { messages: [{ role: 'user', content: `Answer with the single word ${word2}.` }] },
      { 'x-user-plan': 'solo', 'x-stripe-subscription-id': subscription.id },
    );
    t.equal(direct.status, 402, 'a backend call for the user is refused too');
    t.has(await direct.json(), { code: 'BUDGET_EXCEEDED' }, "BUDGET_EXCEEDED: the user's monthly limit");
    t.equal(calls(), callsBefore, 'and the model server still received nothing more');
    t.match(
      await (await web.request('GET', '/api/billing')).json(),
      { usage: { monthUsd: billed.usage.monthUsd } },
      "and the month's spend did not grow",
    );

    // 7. Clean up: the agent and its container go.
    const removed = await backend('DELETE', `/api/agents/${agent.id}`);
    t.same(await removed.json(), { id: agent.id, deleted: true });
    agentId = undefined;
    t.same(await ours(), [], 'no container left');
    t.comment(
      `timings: provisioning → running ${provisioningMs} ms; prompt → model call ${modelCallMs} ms; prompt → answer ${turnMs} ms`,
    );
  },
);
