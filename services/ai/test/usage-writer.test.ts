import t from 'tap';
import { sql } from '@agentyard/db';
import { systemDb } from '@agentyard/testing';
import { writeBatch, type PendingUsage } from '../src/domain/privileged/usage-writer.ts';

const today = new Date().toISOString().slice(0, 10);
const row = (userRef: string, tools: string[]): PendingUsage => ({
  id: crypto.randomUUID(),
  userRef,
  userId: null,
  agentId: 'agent-1',
  model: 'openai/gpt-4o-mini',
  provider: 'openai',
  inputTokens: 10,
  outputTokens: 5,
  costUsd: 0.000001,
  turns: 1,
  tools,
  at: new Date(),
});
const toolTotals = (userRef: string) =>
  systemDb()
    .selectFrom('usage_tools_daily')
    .select(['tool', 'calls', 'answers'])
    .where('user_ref', '=', userRef)
    .where('day', '=', today)
    .orderBy('tool')
    .execute();
const usageCalls = async (userRef: string) =>
  Number(
    (
      await systemDb()
        .selectFrom('usage_daily')
        .select('calls')
        .where('user_ref', '=', userRef)
        .executeTakeFirstOrThrow()
    ).calls,
  );

t.test(
  'a batch written again (a retry after an unseen commit) counts neither usage nor tool calls twice',
  async (t) => {
    const userRef = `writer-${crypto.randomUUID()}`;
    const batch = [row(userRef, ['search', 'search', 'read_file']), row(userRef, ['search']), row(userRef, [])];
    await writeBatch(systemDb(), batch);
    await writeBatch(systemDb(), batch);
    t.same(await toolTotals(userRef), [
      { tool: 'read_file', calls: 1, answers: 1 },
      { tool: 'search', calls: 3, answers: 2 },
    ]);
    t.equal(await usageCalls(userRef), 3);

    await writeBatch(systemDb(), [...batch, row(userRef, ['search'])]);
    t.same(
      await toolTotals(userRef),
      [
        { tool: 'read_file', calls: 1, answers: 1 },
        { tool: 'search', calls: 4, answers: 3 },
      ],
      'only the new row is added',
    );
    t.equal(await usageCalls(userRef), 4);
    const events = await systemDb()
      .selectFrom('usage_events')
      .select('tool_names')
      .where('user_ref', '=', userRef)
      .execute();
    t.same(events.map((e) => e.tool_names.join(',')).sort(), ['', 'search', 'search', 'search,search,read_file']);
  },
);

t.test('a written row holds exactly what was recorded', async (t) => {
  const at = new Date('2026-03-04T23:59:59.123Z');
  const attempts = [
    { model: 'openai/gpt-4o-mini', provider: 'openai', status: 429, outcome: 'failed' as const, ms: 3 },
    { model: 'openai/gpt-4o-mini', provider: 'openai', status: 200, outcome: 'served' as const, ms: 12 },
  ];
  const record = {
    ...row(`writer-${crypto.randomUUID()}`, ['web_search']),
    userId: crypto.randomUUID(),
    agentId: null,
    costUsd: 0.00001234,
    detail: { attempts },
    channel: 'telegram',
    at,
  };
  await writeBatch(systemDb(), [record, { ...row(record.userRef, []), costUsd: null }]);
  const written = await systemDb()
    .selectFrom('usage_events')
    .selectAll()
    .select(sql<string>`to_char(day, 'YYYY-MM-DD')`.as('utc_day'))
    .where('id', '=', record.id)
    .executeTakeFirstOrThrow();
  const { day: _day, ...columns } = written;
  t.same(columns, {
    id: record.id,
    user_id: record.userId,
    user_ref: record.userRef,
    agent_id: null,
    model: record.model,
    provider: record.provider,
    input_tokens: 10,
    output_tokens: 5,
    total_tokens: 15,
    cache_read_tokens: 0,
    cache_write_tokens: 0,
    cost_usd: '0.00001234',
    turn_count: 1,
    tool_names: ['web_search'],
    detail: { attempts },
    outcome: 'served',
    channel: 'telegram',
    occurred_at: at,
    utc_day: '2026-03-04',
  });
  const unpriced = await systemDb()
    .selectFrom('usage_events')
    .select(['cost_usd', 'channel'])
    .where('user_ref', '=', record.userRef)
    .where('id', '!=', record.id)
    .executeTakeFirstOrThrow();
  t.equal(unpriced.cost_usd, null, 'an unpriced call keeps a null cost');
  t.equal(unpriced.channel, null, 'a call no channel started names none');
});

t.test(
  "a failed call counts among the day's calls and apart as failed, once however often its batch is written",
  async (t) => {
    const userRef = `writer-${crypto.randomUUID()}`;
    const attempts = [
      { model: 'openai/gpt-4o-mini', provider: 'openai', status: 503, outcome: 'failed' as const, ms: 4 },
    ];
    const failed: PendingUsage = {
      ...row(userRef, []),
      inputTokens: 0,
      outputTokens: 0,
      costUsd: 0,
      turns: 0,
      outcome: 'failed',
      detail: { attempts },
    };
    const batch = [row(userRef, []), failed];
    await writeBatch(systemDb(), batch);
    await writeBatch(systemDb(), batch);
    const daily = await systemDb()
      .selectFrom('usage_daily')
      .select(['calls', 'failed_calls', 'total_tokens'])
      .where('user_ref', '=', userRef)
      .executeTakeFirstOrThrow();
    t.same(daily, { calls: 2, failed_calls: 1, total_tokens: 15 });
    const written = await systemDb()
      .selectFrom('usage_events')
      .select(['outcome', 'cost_usd'])
      .where('id', '=', failed.id)
      .executeTakeFirstOrThrow();
    t.same(written, { outcome: 'failed', cost_usd: '0.00000000' });
  },
);
