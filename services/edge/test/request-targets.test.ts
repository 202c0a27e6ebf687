import type { AddressInfo } from 'node:net';
import t from 'tap';
import { catalog } from '@agentyard/proto-schemas';
import { appDb, sendRaw, startTrapListener } from '@agentyard/testing';
import { buildApp } from '../src/app.ts';
import { loadEdgeConfig } from '../src/config.ts';
import { rateLimitRedis } from '../src/plugins/rate-limits.ts';
import { startEchoService } from './helper.ts';

const agentId = '00000000-0000-4000-8000-00000000000a';
const upgrade = [
  'Upgrade: websocket',
  'Connection: Upgrade',
  'Sec-WebSocket-Version: 13',
  'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==',
];

t.test(
  'every listener refuses a target that is not a path (400) and reaches no other host, plain or upgrading',
  async (t) => {
    const trap = await startTrapListener();
    t.teardown(() => trap.close());
    const echo = await startEchoService(t, { everyPath: true });
    const config = loadEdgeConfig({ ...process.env, EDGE_AGENT_HOST: '127.0.0.1', EDGE_AGENT_PORT: '0' });
    const redis = rateLimitRedis(config.REDIS_URL);
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
    const elsewhere = `http://127.0.0.1:${trap.port}`;
    const key = `Authorization: Bearer ${process.env.INTERNAL_API_KEY}`;
    const cases = [
      {
        listener: edge.web,
        targets: [`GET ${elsewhere}/api/control-ui/${agentId}/ HTTP/1.1`, `GET ${elsewhere}/api/agents HTTP/1.1`],
        extra: [],
        path: '/api/health',
        status: 200,
      },
      {
        listener: edge.backend,
        targets: [`GET ${elsewhere}/api/runtime/proxy/${agentId}/x HTTP/1.1`, `GET ${elsewhere}/api/agents HTTP/1.1`],
        extra: [key],
        path: '/health',
        status: 200,
      },
      {
        listener: edge.agents!,
        targets: [`POST ${elsewhere}/v1/chat/completions HTTP/1.1`, `GET ${elsewhere}/v1/models HTTP/1.1`],
        extra: ['Authorization: Bearer some-agent-key'],
        path: '/v1/no-such-path',
        status: 404,
      },
    ];
    for (const { listener, targets, extra, path, status } of cases) {
      await listener.listen({ host: '127.0.0.1', port: 0 });
      const { port } = listener.server.address() as AddressInfo;
      for (const target of targets)
        for (const upgrading of [false, true]) {
          const answer = await sendRaw('127.0.0.1', port, [
            target,
            `Host: 127.0.0.1:${port}`,
            ...extra,
            ...(upgrading ? upgrade : ['Content-Length: 0']),
          ]);
          t.equal(answer.status, 400, `${listener.serviceName}: ${target}${upgrading ? ' (upgrade)' : ''}`);
          t.same(JSON.parse(answer.body), { error: 'Request target must be a path' });
        }
      const plain = await sendRaw('127.0.0.1', port, [`GET ${path} HTTP/1.1`, `Host: 127.0.0.1:${port}`, ...extra]);
      t.equal(plain.status, status, `${listener.serviceName}: a path is served as before`);
    }
    t.same(trap.heard, [], 'the other host heard nothing');
  },
);
