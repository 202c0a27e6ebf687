import t from 'tap';
import { randomBytes } from 'node:crypto';
import type { Delivered } from '@agentyard/testing';
import { startAgentJourney } from './support/agent-journey.ts';
import { noAgentContainers } from './support/containers.ts';

// The gateway's `agent` plugin with a real agent: on the platform as `npm start` runs it (every
// service and worker, the edge with its agent listener, the real OpenClaw image in the container
// engine) and a local OpenAI-wire model server as the AI gateway's only provider, a user's script
// calls POST /api/v1/gateway with `plugin: agent`; the agent answers with the model's words, the
// call's fee is taken from credits (solo includes no allowance here) and is in the ledger; another
// user naming that agent gets 404 and pays nothing. Heavy (~1.4 GB, a core for a minute while the
// gateway boots): one agent, removed when the test ends.
t.setTimeout(1_500_000);

const skip = noAgentContainers;
const messagesOf = (d: Delivered) => (d.body.messages ?? []) as { role: string; content: unknown }[];
const textOf = (content: unknown) => (typeof content === 'string' ? content : JSON.stringify(content ?? ''));

t.test(
  "a user's script asks their agent through /api/v1/gateway and pays the agent plugin's fee from credits",
  { skip },
  async (t) => {
    const journey = await startAgentJourney(t, {
      AGENT_PORT_RANGE: '36000-36499',
      PLAN_MONTHLY_ALLOWANCE_USD: 'solo:0,collective:15,label:40,network:150',
      GATEWAY_PLUGIN_PRICES_USD: 'agent:0.01,generate-text:0.002,summarize:0.003',
    });
    const { model } = journey;
    const { web, userId: owner } = await journey.subscriber('gateway-agent', 'solo');
    const topUp = await web.request('GET', '/api/wallet/top-up?amount=5');
    t.equal((await web.submitForm(new URL(topUp.headers.get('location')!).pathname)).status, 303, 'credits bought');
    const { id: agentId, settled: leftProvisioning } = await journey.provision(web, owner, 'Medlar');
    const settled = await leftProvisioning();
    if (!t.equal(settled, 'running', 'the agent runs')) return;

    // 2. The gateway call: the agent's answer is the model server's, reached through the platform's AI gateway.
    const question = `Are medlars best bletted? (${randomBytes(4).toString('hex')})`;
    const called = await web.request(
      'POST',
      '/api/v1/gateway',
      { plugin: 'agent', agentId, input: question },
      { timeoutMs: 240_000 },
    );
    t.equal(called.status, 200, 'the agent plugin answered');
    const answer = (await called.json()) as {
      plugin: string;
      agentId: string;
      output: string;
      payment: { method: string; chargedUsd: number; balanceUsd: number };
    };
    t.match(answer, {
      plugin: /^agent$/,
      agentId,
      output: 'Hello from the local provider',
      payment: { method: /^credits$/, chargedUsd: 0.01 },
    });
    const call = await model.delivery(
      (d) => messagesOf(d).some((m) => m.role === 'user' && textOf(m.content).includes(question)),
      1000,
    );
    t.equal(call.path, '/openai/v1/chat/completions', 'the model server got the question from the agent');

    // 3. The ledger: the fee (and the agent's own model calls) taken from the $5.
    const credits = (await (await web.request('GET', '/api/credits')).json()) as {
      balanceUsd: number;
      entries: { kind: string; amountUsd: number }[];
    };
    t.ok(credits.balanceUsd <= 5 - 0.01 + 1e-9, `at least the fee was taken (${credits.balanceUsd})`);
    t.ok(answer.payment.balanceUsd <= 5 - 0.01 + 1e-9, "the answer's balance had the fee taken");
    t.ok(
      credits.entries.some((e) => e.kind === 'usage' && e.amountUsd < 0),
      'usage entries in the ledger',
    );

    // 4. Another user naming this agent: 404, and no fee (collective's allowance would have paid one).
    const { web: stranger } = await journey.subscriber('gateway-stranger', 'collective');
    const theirs = await stranger.request('POST', '/api/v1/gateway', { plugin: 'agent', agentId, input: 'Hello?' });
    t.equal(theirs.status, 404, "another user's agent is not found");
    t.match(
      await (await stranger.request('GET', '/api/billing')).json(),
      { usage: { monthUsd: 0 } },
      'and costs them nothing',
    );
  },
);
