import t from 'tap';
import { EventEmitter, once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { hashToken, randomToken } from '@agentyard/crypto';
import { createUserRow, systemDb } from '@agentyard/testing';
import { catalogById } from '../src/domain/model-catalog.ts';
import { costOf } from '../src/domain/prices.ts';
import { addCreditEntry, creditBalanceUsd } from '../src/domain/spending/index.ts';
import { activeSubscriptionRow, agentHeaders, build } from './helper.ts';

// A local OpenAI-compatible provider that bills every call its worst case: a token for each byte
// of the body it received (images left out), gpt-4o-mini's most for each image (8 high-detail
// tiles: 2,833 + 5,667 each), and every output token the call allowed (the model's ceiling when
// it named none). A call whose last message says HOLD is answered only once `release` is emitted.
const GPT_4O_MINI_IMAGE_TOKENS = 2833 + 8 * 5667;
const GPT_4O_MINI_MAX_OUTPUT = 16_384;
const received: number[] = [];
const held = new EventEmitter();
const imagesLeftOut = (body: { messages: { content: unknown }[] }) => {
  let images = 0;
  const messages = body.messages.map((m) =>
    Array.isArray(m.content)
      ? {
          ...m,
          content: m.content.map((part: { type: string }) => {
            if (part.type !== 'image_url') return part;
            images++;
            return { type: part.type };
          }),
        }
      : m,
  );
  return { stripped: { ...body, messages }, images };
};
const worstCaseTokens = (body: {
  messages: { content: unknown }[];
  max_tokens?: number;
  max_completion_tokens?: number;
}) => {
  const { stripped, images } = imagesLeftOut(body);
  return {
    input: Buffer.byteLength(JSON.stringify(stripped)) + images * GPT_4O_MINI_IMAGE_TOKENS,
    output: body.max_completion_tokens ?? body.max_tokens ?? GPT_4O_MINI_MAX_OUTPUT,
  };
};
const server = createServer(async (req, res) => {
  let text = '';
  for await (const chunk of req) text += chunk;
  const body = JSON.parse(text);
  received.push(Date.now());
  if (JSON.stringify(body.messages.at(-1)).includes('HOLD')) {
    held.emit('held');
    await once(held, 'release');
  }
  const usage = worstCaseTokens(body);
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(
    JSON.stringify({
      id: 'chatcmpl-budget',
      object: 'chat.completion',
      created: 1,
      model: 'gpt-4o-mini',
      choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: usage.input, completion_tokens: usage.output, total_tokens: usage.input + usage.output },
    }),
  );
});
server.listen(0, '127.0.0.1');
await once(server, 'listening');
t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));

const env = {
  OPENAI_BASE_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
  OPENAI_API_KEY: 'test-openai-key',
  PLAN_MONTHLY_ALLOWANCE_USD: 'solo:0,collective:15,label:40,network:150',
};
const app = await build(t, env);
const redis = new Redis(process.env.REDIS_URL!);
t.teardown(() => redis.disconnect());
const model = catalogById.get('openai/gpt-4o-mini')!;

async function agentOfNewUser() {
  const user = await createUserRow();
  await activeSubscriptionRow(user.id, 'solo');
  const key = `ag_${randomToken()}`;
  await systemDb()
    .insertInto('agents')
    .values({
      user_id: user.id,
      name: 'burst',
      model: model.id,
      tools_profile: 'messaging',
      subdomain: `b-${randomUUID().slice(0, 8)}`,
      ai_provider: 'openai',
      ai_key_hash: hashToken(key),
    })
    .execute();
  return { user, key };
}
const grant = (userId: string, amountUsd: number) =>
  addCreditEntry(systemDb(), { userId, kind: 'grant', amountUsd, note: 'test budget', source: `test:${randomUUID()}` });
const spentBy = async (userId: string) => {
  await app.usageWriter.flush();
  const row = await systemDb()
    .selectFrom('usage_events')
    .select((eb) => eb.fn.sum<string>('cost_usd').as('cost'))
    .where('user_id', '=', userId)
    .executeTakeFirstOrThrow();
  return Number(row.cost ?? 0);
};

// Text of many bytes a character (4 characters a token would count it at an eighth of its bytes),
// an image, and no output limit: every way a prompt was under-counted before.
const image = { type: 'image_url', image_url: { url: `data:image/png;base64,${'iVBORw0KGgo'.repeat(8)}` } };
const body = {
  model: model.id,
  messages: [{ role: 'user', content: [{ type: 'text', text: '😀'.repeat(400) }, image] }],
};
// What one call costs at the provider's worst case, as the gateway sends it (bounded to DEFAULT_MAX_TOKENS, 4096).
const perCall = costOf(
  model,
  worstCaseTokens({ ...body, model: model.upstream, max_tokens: 4096 } as never).input,
  4096,
)!;

t.test(
  '50 concurrent worst-case calls at the edge of the credits: spend never passes them, ends within one reservation, the ledger stays >= 0',
  async (t) => {
    const { user, key } = await agentOfNewUser();
    const budget = perCall * 10.5; // allowance zero: all of it credits
    await grant(user.id, budget);
    const before = received.length;
    const call = () =>
      app.inject({ method: 'POST', url: '/v1/chat/completions', headers: agentHeaders(key), payload: body });

    const answers = await Promise.all(Array.from({ length: 50 }, call));
    const served = answers.filter((r) => r.statusCode === 200).length;
    const refused = answers.filter((r) => r.statusCode === 402);
    t.equal(served + refused.length, 50, 'every call was served or refused');
    t.ok(refused.every((r) => r.json().code === 'CREDITS_EXHAUSTED'));
    t.equal(received.length - before, served, 'the provider received exactly the admitted calls');

    const spent = await spentBy(user.id);
    t.ok(spent <= budget + 1e-9, `settled spend ${spent} never passes the credits ${budget}`);
    // A reservation is the call's bill plus the gateway's allowance for provider overhead (1,024 tokens, under 5% here).
    t.ok(budget - spent < perCall * 1.05, `spend ${spent} ends within one reservation of ${budget}`);
    t.equal(served, 10);
    t.ok((await creditBalanceUsd(systemDb(), user.id)) >= 0, 'the credits ledger never goes negative');

    const after = received.length;
    t.equal((await call()).statusCode, 402, 'refused once spent');
    // Redis lost its counters (a restart): the month's spend is seeded again from the usage rows.
    const counters = await redis.keys(`${process.env.QUEUE_PREFIX}:spend:*:${user.id}`);
    t.equal(counters.length, 1);
    await redis.del(...counters);
    t.equal((await call()).statusCode, 402, 'still refused after the counters were lost');
    t.equal(received.length, after, 'the provider received nothing after the refusals started');
  },
);

t.test("a user's own limit is hard: a call is admitted only when its whole reservation fits under it", async (t) => {
  const { user, key } = await agentOfNewUser();
  await grant(user.id, perCall * 100);
  await systemDb()
    .insertInto('spending_limits')
    .values({ user_id: user.id, monthly_usd: (perCall * 1.5).toFixed(8) })
    .execute();
  const call = () =>
    app.inject({ method: 'POST', url: '/v1/chat/completions', headers: agentHeaders(key), payload: body });
  const answers = await Promise.all(Array.from({ length: 5 }, call));
  t.equal(
    answers.filter((r) => r.statusCode === 200).length,
    1,
    'one reservation fits under one and a half, two do not',
  );
  t.ok(
    answers
      .filter((r) => r.statusCode !== 200)
      .every((r) => r.statusCode === 402 && r.json().code === 'BUDGET_EXCEEDED'),
  );
  t.ok((await spentBy(user.id)) <= perCall * 1.5);
});

t.test(
  'parts the gateway cannot price (audio, files) are refused with 400 naming them; the provider sees nothing',
  async (t) => {
    const { user, key } = await agentOfNewUser();
    await grant(user.id, 5);
    const before = received.length;
    const res = await app.inject({
      method: 'POST',
      url: '/v1/chat/completions',
      headers: agentHeaders(key),
      payload: {
        model: model.id,
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'listen' },
              { type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } },
              { type: 'file', file: { file_data: 'data:application/pdf;base64,AAAA', filename: 'a.pdf' } },
            ],
          },
        ],
      },
    });
    t.equal(res.statusCode, 400);
    t.same(res.json(), {
      error: 'Message parts the gateway cannot price before the call are not accepted: input_audio, file',
      code: 'UNPRICED_CONTENT',
    });
    t.equal(received.length, before);
  },
);

t.test('a user may hold at most SPEND_CONCURRENT_CALLS_PER_USER calls open: more are 429 {error, code}', async (t) => {
  const capped = await build(t, { ...env, SPEND_CONCURRENT_CALLS_PER_USER: '2' });
  const { user, key } = await agentOfNewUser();
  await grant(user.id, 5);
  const call = (text: string) =>
    capped.inject({
      method: 'POST',
      url: '/v1/chat/completions',
      headers: agentHeaders(key),
      payload: { model: model.id, max_tokens: 10, messages: [{ role: 'user', content: text }] },
    });
  const heldTwice = new Promise<void>((resolve) => {
    let n = 0;
    const seen = () => {
      if (++n === 2) {
        held.off('held', seen);
        resolve();
      }
    };
    held.on('held', seen);
  });
  const open = [call('HOLD one'), call('HOLD two')];
  await heldTwice;
  const third = await call('a third at once');
  t.equal(third.statusCode, 429);
  t.same(third.json(), {
    error: 'At most 2 AI calls of one user run at once: wait for one to finish',
    code: 'TOO_MANY_CONCURRENT_CALLS',
  });
  held.emit('release');
  t.same(
    (await Promise.all(open)).map((r) => r.statusCode),
    [200, 200],
  );
  t.equal((await call('once they are done')).statusCode, 200, 'a settled call frees its place');
});
