import t from 'tap';
import { createServer } from 'node:http';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { hashToken, randomToken } from '@agentyard/crypto';
import { repoRoot } from '@agentyard/config';
import { createUserRow, startPlatform, systemDb } from '@agentyard/testing';

interface Span {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  service: string;
}

// A local OTLP/HTTP receiver (JSON encoding, what @opentelemetry/exporter-trace-otlp-http sends).
const spans: Span[] = [];
const receiver = createServer((request, response) => {
  let body = '';
  request.on('data', (chunk) => {
    body += chunk;
  });
  request.on('end', () => {
    if (request.url !== '/v1/traces') return response.writeHead(404).end();
    const payload = JSON.parse(body) as {
      resourceSpans: Array<{
        resource: { attributes: Array<{ key: string; value: { stringValue?: string } }> };
        scopeSpans: Array<{ spans: Omit<Span, 'service'>[] }>;
      }>;
    };
    for (const { resource, scopeSpans } of payload.resourceSpans) {
      const service = resource.attributes.find((a) => a.key === 'service.name')?.value.stringValue ?? '';
      for (const scope of scopeSpans) for (const span of scope.spans) spans.push({ ...span, service });
    }
    response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
t.teardown(() => new Promise((resolve) => receiver.close(resolve)));
const endpoint = `http://127.0.0.1:${(receiver.address() as { port: number }).port}`;

const own = `${process.env.QUEUE_PREFIX}-tr${randomBytes(3).toString('hex')}`;
const platform = await startPlatform(
  ['agents'],
  {
    OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
    OTEL_BSP_SCHEDULE_DELAY: '100',
    QUEUE_PREFIX: own,
    RUNTIME_INSTANCE: own,
    RUNTIME_DRIVER: 'process',
    AGENT_IMAGE: join(repoRoot, 'infra/agent-image/minimal-gateway/server.mjs'),
    AGENT_PORT_RANGE: '37000-37999',
  },
  { workers: true },
);
t.teardown(() => platform.stop());

t.test('one provisioning request is one trace: edge, agents service, queue job, worker', async (t) => {
  const user = await createUserRow({ plan: 'collective' });
  await systemDb()
    .insertInto('subscriptions')
    .values({ id: `sub_${randomBytes(6).toString('hex')}`, user_id: user.id, status: 'active', plan: 'collective' })
    .execute();
  const sessionToken = randomToken();
  await systemDb()
    .insertInto('sessions')
    .values({ user_id: user.id, token_hash: hashToken(sessionToken), expires_at: new Date(Date.now() + 3600_000) })
    .execute();
  const res = await fetch(`${platform.webUrl}/api/agents/provision`, {
    method: 'POST',
    body: JSON.stringify({ name: 'Traced', tier: 'pro', model: 'gpt-4' }),
    headers: {
      cookie: `agentyard-session=${sessionToken}`,
      origin: new URL(platform.env.PUBLIC_BASE_URL!).origin,
      'content-type': 'application/json',
    },
  });
  t.equal(res.status, 201, 'provisioning accepted');
  const { agent } = (await res.json()) as { agent: { id: string } };
  // Deleted as its owner's: the process driver's gateways are detached and would outlive the platform.
  t.teardown(async () => {
    await fetch(`${platform.backendUrl}/api/agents/${agent.id}`, {
      method: 'DELETE',
      signal: AbortSignal.timeout(60_000),
      headers: { authorization: `Bearer ${platform.env.INTERNAL_API_KEY}`, 'x-user-id': user.id },
    }).catch(() => undefined);
  });
  // The request's own root span: the edge has others of its own (its identity change feeds' statements).
  const edgeSpan = () =>
    spans.find((s) => s.service === 'agentyard-edge' && !s.parentSpanId && /provision/.test(s.name));
  // Spans arrive in batches as each process exports them; the worker's job span when the job ends.
  const wanted = (traceId: string) =>
    spans.some((s) => s.traceId === traceId && s.service === 'agentyard-agents-worker' && /provisioning/.test(s.name));
  while (!edgeSpan() || !wanted(edgeSpan()!.traceId)) await new Promise((resolve) => receiver.once('request', resolve));
  const traceId = edgeSpan()!.traceId;
  const trace = spans.filter((s) => s.traceId === traceId);
  t.ok(
    trace.some((s) => s.service === 'agentyard-agents' && /provision/.test(s.name)),
    'the agents service handled it in the trace',
  );
  t.ok(
    trace.some((s) => s.service === 'agentyard-agents' && /provisioning/.test(s.name)),
    'the job was queued in the trace',
  );
  t.ok(
    trace.some((s) => s.service === 'agentyard-agents-worker' && /provisioning/.test(s.name)),
    'the worker processed it in the trace',
  );
  t.ok(
    trace.some((s) => /pg|postgres|select|insert/i.test(s.name)),
    'PostgreSQL statements are spans of it',
  );
  t.equal(new Set(trace.map((s) => s.traceId)).size, 1);
});
