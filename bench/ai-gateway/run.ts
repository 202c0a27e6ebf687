// bench/ai-gateway: POST /api/ai/chat through the full path (edge -> ai service -> a local
// OpenAI-compatible provider with a fixed latency, plan and subscription checks and usage logging
// on) vs the same chat straight to the provider, in one run, on loopback; then a soak at the same
// rate with the ai service's memory (RSS) before and after.
// Usage: node bench/ai-gateway/run.ts [--rate 500 --seconds 20 --soak-seconds 600 --latency 60 --connections 100]
import { execFileSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { dropDatabase } from '@agentyard/db/admin';
import { createSystemDb } from '@agentyard/db/system';
import { startPlatform } from '@agentyard/testing';
import { ADMIN_URL, ensureDataServices, prepareDatabase } from '../../scripts/lib/platform.ts';

const { values } = parseArgs({ options: {
  rate: { type: 'string', default: '500' }, seconds: { type: 'string', default: '20' }, 'soak-seconds': { type: 'string', default: '600' },
  latency: { type: 'string', default: '60' }, connections: { type: 'string', default: '100' },
} });
const rate = Number(values.rate);
const seconds = Number(values.seconds);
const soakSeconds = Number(values['soak-seconds']);
const latencyMs = Number(values.latency);
const connections = Number(values.connections);

// The provider: OpenAI chat completions answered after a fixed delay.
const answer = JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: 'benchmark answer' }, finish_reason: 'stop' }], usage: { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 } });
const provider = createServer((req, res) => {
  req.resume();
  req.on('end', () => setTimeout(() => { res.writeHead(200, { 'content-type': 'application/json' }); res.end(answer); }, latencyMs));
});
provider.keepAliveTimeout = 120_000;
await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
const providerUrl = `http://127.0.0.1:${(provider.address() as { port: number }).port}`;

ensureDataServices();
const database = `agentyard_bench_${randomBytes(3).toString('hex')}`;
const urls = await prepareDatabase(database);
const apiKey = randomBytes(32).toString('base64url');
const platform = await startPlatform(['ai'], {
  ...urls, NODE_ENV: 'production', LOG_LEVEL: 'warn', IDENTITY_SECRET: randomBytes(32).toString('base64url'), IDENTITY_TTL_SECONDS: '300',
  INTERNAL_API_KEY: apiKey, ENCRYPTION_KEYS: `b1:${randomBytes(32).toString('base64')}`, SESSION_SECRET: randomBytes(32).toString('base64url'),
  QUEUE_PREFIX: `bench-${randomUUID()}`, RATE_LIMITS: 'backend-api=100000000,backend-ai=100000000',
  OPENAI_BASE_URL: `${providerUrl}/v1`, OPENAI_API_KEY: 'bench-provider-key',
});
const system = createSystemDb(urls.DATABASE_SYSTEM_URL, { max: 2 });

function aiServiceRss(): number {
  const line = execFileSync('ss', ['-Hltnp', `sport = :${platform.env.AI_PORT}`], { encoding: 'utf8' });
  const pid = /pid=(\d+)/.exec(line)?.[1];
  if (!pid) throw new Error('ai service process not found');
  const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kb) / 1024;
}

try {
  const user = await system.insertInto('users').values({ email: `bench-${randomUUID()}@example.test`, name: 'bench', plan: 'solo' }).returning('id').executeTakeFirstOrThrow();
  const subscription = `sub_bench_${randomUUID()}`;
  await system.insertInto('subscriptions').values({ id: subscription, user_id: user.id, status: 'active', plan: 'solo', updated_at: new Date() }).execute();
  const body = JSON.stringify({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] });
  const targets = {
    direct: { url: `${providerUrl}/v1/chat/completions`, headers: { 'content-type': 'application/json', authorization: 'Bearer bench-provider-key' } },
    gateway: { url: `${platform.backendUrl}/api/ai/chat`, headers: {
      'content-type': 'application/json', authorization: `Bearer ${apiKey}`, 'x-user-id': user.id, 'x-user-plan': 'solo', 'x-stripe-subscription-id': subscription,
    } },
  };
  const check = await fetch(targets.gateway.url, { method: 'POST', headers: targets.gateway.headers, body });
  if (check.status !== 200) throw new Error(`gateway answered ${check.status} ${await check.text()}`);

  const run = (target: { url: string; headers: Record<string, string> }, duration: number) =>
    autocannon({ url: target.url, method: 'POST', headers: target.headers, body, connections, duration, overallRate: rate });
  const row = (name: string, r: autocannon.Result) => `| ${name} | ${r.requests.average.toFixed(0)} | ${r.latency.p50} | ${r.latency.p99} | ${r.non2xx + r.errors} |`;

  await run(targets.gateway, 3);
  await run(targets.direct, 3);
  const lines = ['| run | req/s | p50 ms | p99 ms | errors |', '|---|---|---|---|---|'];
  const rounds = { direct: [] as autocannon.Result[], gateway: [] as autocannon.Result[] };
  // Alternate the two paths so machine noise falls on both.
  for (let round = 0; round < 3; round++) {
    for (const name of ['direct', 'gateway'] as const) {
      const result = await run(targets[name], seconds);
      rounds[name].push(result);
      lines.push(row(`${name} @ ${rate} req/s, round ${round + 1}`, result));
    }
  }
  const median = (xs: number[]) => { const s = [...xs].sort((a, b) => a - b); return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2; };
  const pick = (name: 'direct' | 'gateway', key: 'p50' | 'p99') => median(rounds[name].map((r) => r.latency[key]));

  const rssBefore = aiServiceRss();
  const soak = await run(targets.gateway, soakSeconds);
  const rssAfter = aiServiceRss();
  lines.push(row(`gateway soak, ${soakSeconds} s`, soak));
  await new Promise((resolve) => setTimeout(resolve, 2500)); // one usage flush interval, so the rows are in
  const logged = await system.selectFrom('usage_events').select(system.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();

  console.log(lines.join('\n'));
  console.log(`\nprovider latency ${latencyMs} ms; medians over 3 rounds: direct p50 ${pick('direct', 'p50')} / p99 ${pick('direct', 'p99')} ms, gateway p50 ${pick('gateway', 'p50')} / p99 ${pick('gateway', 'p99')} ms`);
  console.log(`gateway adds p50 ${(pick('gateway', 'p50') - pick('direct', 'p50')).toFixed(2)} ms, p99 ${(pick('gateway', 'p99') - pick('direct', 'p99')).toFixed(2)} ms`);
  console.log(`ai service RSS before soak ${rssBefore.toFixed(1)} MB, after ${soakSeconds} s at ${rate} req/s ${rssAfter.toFixed(1)} MB; usage rows written ${logged.n}`);
} finally {
  await system.destroy();
  await platform.stop();
  provider.close();
  await dropDatabase(ADMIN_URL, database);
}
