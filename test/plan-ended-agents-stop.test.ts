import t from 'tap';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from '@agentyard/config';
import { createUserRow, startPlatform, systemDb } from '@agentyard/testing';
import { deliverStripeEvent } from './support/journey.ts';

// A network subscriber's agents outlived the subscription. Now the AI service's webhook, on a
// cancellation or a plan going down, queues the agents worker's job that stops each agent the
// plan no longer covers (real agents: the process driver's minimal gateway), with a reason the
// owner sees; started again, an agent runs on the plan its owner has now, or is refused with its code.
t.test(
  'a subscription cancelled through the Stripe webhook stops the agents; a lower plan runs only what it covers',
  async (t) => {
    t.setTimeout(240_000);
    const dataDir = await mkdtemp(join(tmpdir(), 'agentyard-plan-ended-'));
    t.teardown(() => rm(dataDir, { recursive: true, force: true }));
    const own = `${process.env.QUEUE_PREFIX ?? 'test'}-plan${randomBytes(3).toString('hex')}`;
    const webhookSecret = `whsec_${randomBytes(24).toString('hex')}`;
    const platform = await startPlatform(
      ['ai', 'agents'],
      {
        QUEUE_PREFIX: own,
        RUNTIME_INSTANCE: own,
        RUNTIME_DRIVER: 'process',
        RUNTIME_DATA_DIR: dataDir,
        AGENT_IMAGE: join(repoRoot, 'infra/agent-image/minimal-gateway/server.mjs'),
        AGENT_PORT_RANGE: '38700-38799',
        AGENT_READY_TIMEOUT_MS: '30000',
        STRIPE_WEBHOOK_SECRET: webhookSecret,
        STRIPE_PRICE_SOLO: 'price_solo_monthly',
        STRIPE_PRICE_NETWORK: 'price_network_monthly',
        // Long enough for a plan to come back within it on a loaded machine, short enough to wait out.
        PLAN_GRACE_PERIOD_MS: '20000',
      },
      { workers: true },
    );
    const user = await createUserRow();
    const backend = (method: string, path: string, body?: object) =>
      fetch(`${platform.backendUrl}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${platform.env.INTERNAL_API_KEY}`,
          'x-user-id': user.id,
          ...(body ? { 'content-type': 'application/json' } : {}),
        },
        body: body ? JSON.stringify(body) : undefined,
        signal: AbortSignal.timeout(60_000),
      });
    t.teardown(async () => {
      for (const agent of await systemDb().selectFrom('agents').select('id').where('user_id', '=', user.id).execute())
        await backend('DELETE', `/api/agents/${agent.id}`).catch(() => undefined);
      await platform.stop();
    });

    const subscriptionId = `sub_${randomBytes(8).toString('hex')}`;
    let created = Math.floor(Date.now() / 1000);
    const subscriptionEvent = (type: string, status: string, price: string) => ({
      id: `evt_${randomBytes(8).toString('hex')}`,
      object: 'event',
      type,
      created: created++,
      data: {
        object: {
          id: subscriptionId,
          object: 'subscription',
          status,
          customer: 'cus_plan_ended',
          metadata: { userId: user.id, plan: 'network' },
          items: {
            object: 'list',
            data: [{ price: { id: price, object: 'price' }, current_period_end: created + 30 * 86400 }],
          },
        },
      },
    });
    const deliver = async (event: object) =>
      t.equal((await deliverStripeEvent(platform.webUrl, webhookSecret, event)).status, 200);
    const row = (id: string) =>
      systemDb()
        .selectFrom('agents')
        .select(['status', 'last_error', 'gateway_url', 'stops_beyond_plan_at'])
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
    /** Polls the agent's row (an outside observation) until `done`, for at most a minute. */
    async function until(id: string, done: (r: Awaited<ReturnType<typeof row>>) => boolean) {
      const deadline = Date.now() + 60_000;
      for (let r = await row(id); Date.now() < deadline; r = await row(id)) {
        if (done(r)) return r;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      throw new Error(`agent ${id} did not reach the expected state: ${JSON.stringify(await row(id))}`);
    }
    const answers = async (url: string | null) =>
      url !== null &&
      (await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2000) }).then(
        (r) => r.ok,
        () => false,
      ));

    await deliver(subscriptionEvent('customer.subscription.created', 'active', 'price_network_monthly'));
    const agents: string[] = [];
    for (const name of ['First', 'Second']) {
      const res = await backend('POST', '/api/agents', { name, config: { plan: 'network' } });
      t.equal(res.status, 201, name);
      agents.push(((await res.json()) as { id: string }).id);
    }
    const running = await Promise.all(agents.map((id) => until(id, (r) => r.status === 'running')));
    for (const r of running) t.ok(await answers(r.gateway_url), 'a network agent runs');

    // Down to solo in the portal (the metadata still says network): solo covers none of two 16 GB
    // agents. They run on for the grace period, its end on each; the plan back within it clears it.
    const downgradedAt = Date.now();
    await deliver(subscriptionEvent('customer.subscription.updated', 'active', 'price_solo_monthly'));
    for (const id of agents) {
      const marked = await until(id, (r) => r.stops_beyond_plan_at !== null);
      t.equal(marked.status, 'running', 'beyond the plan, it runs on in its grace period');
      const end = new Date(marked.stops_beyond_plan_at!).getTime();
      t.ok(end > downgradedAt && end <= Date.now() + 20_000, 'which ends within PLAN_GRACE_PERIOD_MS');
    }
    await deliver(subscriptionEvent('customer.subscription.updated', 'active', 'price_network_monthly'));
    for (const id of agents)
      t.has(
        await until(id, (r) => r.stops_beyond_plan_at === null),
        { status: 'running' },
        'network again within the grace period: kept running',
      );

    await deliver(subscriptionEvent('customer.subscription.updated', 'active', 'price_solo_monthly'));
    for (const id of agents) {
      const stopped = await until(id, (r) => r.status === 'stopped');
      t.equal(
        stopped.last_error,
        'Stopped: your plan no longer covers this agent',
        'the grace period over, stopped: the owner sees why',
      );
      t.equal(stopped.stops_beyond_plan_at, null);
      t.notOk(await answers(running[agents.indexOf(id)]!.gateway_url), 'its gateway is gone');
    }
    // Started again on solo, the agent follows the plan it is on now: solo's size and tools profile, its files kept.
    const plan = (id: string) =>
      systemDb().selectFrom('agents').select(['plan', 'tools_profile']).where('id', '=', id).executeTakeFirstOrThrow();
    t.same(await plan(agents[0]!), { plan: 'network', tools_profile: 'coding' }, 'made on network');
    const restarted = await backend('POST', `/api/agents/${agents[0]}/start`);
    t.equal(restarted.status, 200, 'a network-sized agent starts again on solo');
    const back = await row(agents[0]!);
    t.equal(back.status, 'running');
    // Its new container's gateway answers once it has booted.
    const bootedBy = Date.now() + 30_000;
    while (!(await answers(back.gateway_url)) && Date.now() < bootedBy)
      await new Promise((resolve) => setTimeout(resolve, 200));
    t.ok(await answers(back.gateway_url), 'and runs');
    t.same(
      await plan(agents[0]!),
      { plan: 'solo', tools_profile: 'messaging' },
      "at solo's size, with solo's tools profile",
    );
    const second = await backend('POST', `/api/agents/${agents[1]}/start`);
    t.equal(second.status, 429, 'solo runs one agent');
    t.match(await second.json(), { error: String, code: /^AGENT_LIMIT$/ });

    // Cancelled: nothing runs, and nothing starts again.
    await deliver(subscriptionEvent('customer.subscription.deleted', 'canceled', 'price_solo_monthly'));
    const refused = await backend('POST', `/api/agents/${agents[1]}/start`);
    t.equal(refused.status, 403);
    t.match(await refused.json(), { error: String, code: /^SUBSCRIPTION_REQUIRED$/ });
    t.equal((await row(agents[1]!)).status, 'stopped');
  },
);
