import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { catalog } from '@agentyard/proto-schemas';
import { appDb, sendRaw } from '@agentyard/testing';
import { buildApp } from '../src/app.ts';
import { loadEdgeConfig } from '../src/config.ts';
import { rateLimitRedis } from '../src/plugins/rate-limits.ts';
import { startEchoService } from './helper.ts';

t.test('the agent listener never believes X-Forwarded-For, even from an address the edge trusts', async (t) => {
  const echo = await startEchoService(t, { everyPath: true });
  const config = loadEdgeConfig({
    ...process.env,
    EDGE_AGENT_HOST: '127.0.0.1',
    EDGE_AGENT_PORT: '0',
    TRUST_PROXY: '127.0.0.1',
    RATE_LIMITS: 'backend-agent-models=2',
    QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}-${Date.now()}-forwarded`,
  });
  const redis = rateLimitRedis(config.REDIS_URL);
  if (redis.status !== 'ready') await once(redis, 'ready'); // without an offline queue, a request before it would go uncounted
  const edge = await buildApp(config, {
    db: appDb(),
    redis,
    health: { current: () => 'healthy' },
    routes: catalog,
    upstreamOf: () => echo,
  });
  t.teardown(async () => {
    await edge.close();
    redis.disconnect();
  });
  await edge.agents!.listen({ host: '127.0.0.1', port: 0 });
  const { port } = edge.agents!.server.address() as AddressInfo;
  // Each request claims another client address (and sends no key): all count against 127.0.0.1.
  const statuses: number[] = [];
  for (const n of [1, 2, 3]) {
    const answer = await sendRaw('127.0.0.1', port, [
      'GET /v1/models HTTP/1.1',
      `Host: 127.0.0.1:${port}`,
      `X-Forwarded-For: 203.0.113.${n}`,
    ]);
    statuses.push(answer.status);
  }
  t.equal(statuses[2], 429, `the third request of one address is refused whatever it claims (${statuses.join(', ')})`);
});
