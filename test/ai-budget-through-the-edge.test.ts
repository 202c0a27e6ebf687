import t from 'tap';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { hashToken, randomToken } from '@agentyard/crypto';
import { createUserRow, startPlatform, systemDb } from '@agentyard/testing';
import { catalogById } from '../services/ai/src/domain/model-catalog.ts';
import { costOf } from '../services/ai/src/domain/prices.ts';
import { addCreditEntry, creditBalanceUsd } from '../services/ai/src/domain/spending/index.ts';

// Issue 27 (N5), probed from outside: an agent's concurrent model calls on the edge's agent listener
// (the backend surface where there is none) against a local OpenAI-compatible provider that bills
// every call its worst case. Admission used to size prompts at 4 characters a token and let images
// through unpriced, so concurrent calls overshot the credits by a multiple and the ledger went
// negative; now the spend ends within one reservation of the credits and never past them.
t.setTimeout(180_000);

// The provider's bill: a token for each byte of the body it received (images left out), gpt-4o-mini's
// most for each image (8 high-detail tiles: 2,833 + 5,667 each), and every output token the call allowed.
const IMAGE_TOKENS = 2833 + 8 * 5667;
type Body = { messages: { content: unknown }[]; max_tokens?: number; max_completion_tokens?: number };
const worstCase = (body: Body) => {
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
  return {
    input: Buffer.byteLength(JSON.stringify({ ...body, messages })) + images * IMAGE_TOKENS,
    output: body.max_completion_tokens ?? body.max_tokens ?? 16_384,
  };
};
let received = 0;
const provider = createServer(async (req, res) => {
  let text = '';
  for await (const chunk of req) text += chunk;
  const usage = worstCase(JSON.parse(text));
  received++;
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(
    JSON.stringify({
      id: `chatcmpl-${randomUUID()}`,
      object: 'chat.completion',
      created: 1,
      model: 'gpt-4o-mini',
      choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: usage.input, completion_tokens: usage.output, total_tokens: usage.input + usage.output },
    }),
  );
});
provider.listen(0, '127.0.0.1');
await once(provider, 'listening');
t.teardown(() => new Promise<void>((resolve) => provider.close(() => resolve())));

const CALLS = 40;
const platform = await startPlatform(['ai'], {
  OPENAI_BASE_URL: `http://127.0.0.1:${(provider.address() as AddressInfo).port}/v1`,
  OPENAI_API_KEY: 'test-openai-key',
  // No allowance on any plan: the credits are the whole budget.
  PLAN_MONTHLY_ALLOWANCE_USD: 'solo:0,collective:0,label:0,network:0',
  USAGE_FLUSH_MS: '50',
  // Every call reaches admission at once: neither the open-call nor the stream caps answer first.
  SPEND_CONCURRENT_CALLS_PER_USER: String(CALLS),
  EDGE_STREAMS_PER_USER: String(CALLS),
  QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}-e2e-ai-budget`,
});
t.teardown(() => platform.stop());
const base = platform.agentUrl ?? platform.backendUrl;

const model = catalogById.get('openai/gpt-4o-mini')!;
// Text of four bytes a character (what 4 characters a token counted at a sixteenth), an image, no output limit.
const image = { type: 'image_url', image_url: { url: `data:image/png;base64,${'iVBORw0KGgo'.repeat(8)}` } };
const body = {
  model: model.id,
  messages: [{ role: 'user', content: [{ type: 'text', text: '😀'.repeat(400) }, image] }],
};
// One call's bill at the provider's worst case, as the gateway sends it (output bounded to its default 4,096).
const perCall = costOf(model, worstCase({ ...body, model: model.upstream, max_tokens: 4096 } as never).input, 4096)!;

t.test(
  `${CALLS} concurrent worst-case calls through the edge: spend ends within one reservation of the credits, never past them`,
  async (t) => {
    const user = await createUserRow({ plan: 'solo' });
    const key = `ag_${randomToken()}`;
    const agent = await systemDb()
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
      .returning('id')
      .executeTakeFirstOrThrow();
    const credits = perCall * 10.5;
    await addCreditEntry(systemDb(), {
      userId: user.id,
      kind: 'grant',
      amountUsd: credits,
      note: 'budget probe',
      source: `test:${randomUUID()}`,
    });

    const call = () =>
      fetch(`${base}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(60_000),
      }).then(async (res) => ({ status: res.status, body: (await res.json()) as { code?: string } }));
    const answers = await Promise.all(Array.from({ length: CALLS }, call));
    const served = answers.filter((a) => a.status === 200).length;
    const refused = answers.filter((a) => a.status === 402);
    t.equal(
      served + refused.length,
      CALLS,
      `every call was served or refused for credits (${answers.map((a) => a.status).join(',')})`,
    );
    t.ok(
      refused.every((a) => a.body.code === 'CREDITS_EXHAUSTED'),
      'the refusals say the credits are spent',
    );
    t.equal(received, served, 'the provider received exactly the admitted calls');

    // Usage rows land on the service's next flush (50 ms): read until every served call has its row.
    const deadline = Date.now() + 30_000;
    let rows: { cost_usd: string | null }[] = [];
    while (rows.length < served && Date.now() < deadline) {
      rows = await systemDb().selectFrom('usage_events').select('cost_usd').where('agent_id', '=', agent.id).execute();
      if (rows.length < served) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    t.equal(rows.length, served, 'every served call was billed');
    const spent = rows.reduce((sum, row) => sum + Number(row.cost_usd), 0);
    t.ok(spent <= credits + 1e-9, `spend $${spent.toFixed(6)} never passes the credits $${credits.toFixed(6)}`);
    // A reservation is the call's bill plus the gateway's allowance for provider overhead (1,024 tokens, under 5% here).
    t.ok(credits - spent < perCall * 1.05, `spend ends within one reservation ($${perCall.toFixed(6)}) of the credits`);
    t.ok((await creditBalanceUsd(systemDb(), user.id)) >= 0, 'the credits ledger never goes negative');

    const after = received;
    t.equal((await call()).status, 402, 'a call after the spend is refused');
    t.equal(received, after, 'and never reaches the provider');
  },
);
