import t from 'tap';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { hashToken, randomToken } from '@agentyard/crypto';
import { createUserRow, systemDb } from '@agentyard/testing';
import { catalogById } from '../src/domain/model-catalog.ts';
import { costOf } from '../src/domain/prices.ts';
import { addCreditEntry } from '../src/domain/spending/index.ts';
import { activeSubscriptionRow, agentHeaders, build } from './helper.ts';

// A local OpenAI-compatible provider that reports exactly the tokens the gateway reserves for a
// call (its prompt at 4 characters a token, every output token it allowed), so each call costs
// its reservation and the bound is tight: spend ends at most one reservation past the budget.
const received: number[] = [];
const server = createServer(async (req, res) => {
  let text = '';
  for await (const chunk of req) text += chunk;
  const body = JSON.parse(text) as { messages: unknown; tools?: unknown; max_tokens: number };
  received.push(Date.now());
  const prompt = Math.ceil((JSON.stringify(body.messages) + JSON.stringify(body.tools ?? '')).length / 4);
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(
    JSON.stringify({
      id: 'chatcmpl-budget',
      object: 'chat.completion',
      created: 1,
      model: 'gpt-4o-mini',
      choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: prompt, completion_tokens: body.max_tokens, total_tokens: prompt + body.max_tokens },
    }),
  );
});
server.listen(0, '127.0.0.1');
await once(server, 'listening');
t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));

const app = await build(t, {
  OPENAI_BASE_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
  OPENAI_API_KEY: 'test-openai-key',
  PLAN_MONTHLY_ALLOWANCE_USD: 'solo:0,collective:15,label:40,network:150',
});
const redis = new Redis(process.env.REDIS_URL!);
t.teardown(() => redis.disconnect());

const body = { model: 'openai/gpt-4o-mini', max_tokens: 1000, messages: [{ role: 'user', content: 'What is the capital of France?' }] };
const perCall = costOf(catalogById.get('openai/gpt-4o-mini')!, Math.ceil((JSON.stringify(body.messages) + '""').length / 4), 1000)!;

t.test('50 concurrent calls at the edge of a budget: spend ends at most one reservation past it, and no refused call reaches the provider', async (t) => {
  const user = await createUserRow();
  await activeSubscriptionRow(user.id, 'solo');
  const key = `ag_${randomToken()}`;
  await systemDb()
    .insertInto('agents')
    .values({
      user_id: user.id,
      name: 'burst',
      model: 'openai/gpt-4o-mini',
      tools_profile: 'messaging',
      subdomain: `b-${randomUUID().slice(0, 8)}`,
      ai_provider: 'openai',
      ai_key_hash: hashToken(key),
    })
    .execute();
  const budget = perCall * 10.5; // room for ten and a half calls, allowance zero: all of it credits
  await addCreditEntry(systemDb(), { userId: user.id, kind: 'grant', amountUsd: budget, note: 'test budget', source: `test:${randomUUID()}` });
  const call = () => app.inject({ method: 'POST', url: '/v1/chat/completions', headers: agentHeaders(key), payload: body });

  const answers = await Promise.all(Array.from({ length: 50 }, call));
  const served = answers.filter((r) => r.statusCode === 200).length;
  const refused = answers.filter((r) => r.statusCode === 402);
  t.equal(served + refused.length, 50, 'every call was served or refused');
  t.ok(refused.every((r) => r.json().code === 'CREDITS_EXHAUSTED'));
  t.equal(received.length, served, 'the provider received exactly the admitted calls');

  await app.usageWriter.flush();
  const row = await systemDb()
    .selectFrom('usage_events')
    .select((eb) => eb.fn.sum<string>('cost_usd').as('cost'))
    .where('user_id', '=', user.id)
    .executeTakeFirstOrThrow();
  const spent = Number(row.cost);
  t.ok(spent >= budget, `the whole budget was usable (${spent} >= ${budget})`);
  t.ok(spent <= budget + perCall + 1e-8, `settled spend ${spent} <= budget ${budget} + one reservation ${perCall}`);
  t.equal(served, 11);

  const after = received.length;
  t.equal((await call()).statusCode, 402, 'refused once spent');
  // Redis lost its counters (a restart): the month's spend is seeded again from the usage rows.
  const counters = await redis.keys(`${process.env.QUEUE_PREFIX}:spend:*:${user.id}`);
  t.equal(counters.length, 1);
  await redis.del(...counters);
  t.equal((await call()).statusCode, 402, 'still refused after the counters were lost');
  t.equal(received.length, after, 'the provider received nothing after the refusals started');
});
