import t from 'tap';
import Fastify from 'fastify';
import { refuseDevelopmentExposure, runService, runWorkerProcess } from '@agentyard/http';

// Issue 27 (N14): with NODE_ENV unset (development: admins before verification, the local checkout,
// the process driver) no process serves a non-loopback address, whatever listener it is.

t.test('outside production every listener serves loopback only, NODE_ENV unset included', async (t) => {
  const refused = (env: Record<string, string>, listeners: { name: string; host: string }[]) =>
    t.throws(() => refuseDevelopmentExposure(listeners, env), { name: /^ConfigError$/ });
  refused({}, [{ name: 'auth', host: '0.0.0.0' }]);
  refused({ NODE_ENV: 'development' }, [{ name: 'agents', host: '192.0.2.7' }]);
  refused({ NODE_ENV: 'test' }, [{ name: 'ai', host: '::' }]);
  refused({}, [
    { name: 'scheduler', host: '127.0.0.1' },
    { name: 'operations', host: '0.0.0.0' },
  ]);
  t.throws(
    () => refuseDevelopmentExposure([{ name: 'trader', host: '10.0.0.5' }], {}),
    /Refusing to listen on 10\.0\.0\.5 \(trader\): NODE_ENV is development, not production/,
    'the message names the address and why',
  );
  refused({ EDGE_EXPOSED_LISTENERS: 'agent' }, [{ name: 'bridge', host: '0.0.0.0' }]);
});

t.test(
  'loopback always; any address in production; an edge listener where EDGE_EXPOSED_LISTENERS names it',
  async (t) => {
    for (const host of ['127.0.0.1', '127.0.0.9', 'localhost', '::1', '[::1]', ''])
      t.doesNotThrow(() => refuseDevelopmentExposure([{ name: 'auth', host }], {}), `${host || '(none)'} is served`);
    t.doesNotThrow(() =>
      refuseDevelopmentExposure(
        [
          { name: 'auth', host: '0.0.0.0' },
          { name: 'operations', host: '10.0.0.5' },
        ],
        { NODE_ENV: 'production' },
      ),
    );
    t.doesNotThrow(() =>
      refuseDevelopmentExposure([{ name: 'agent', host: '192.0.2.7' }], { EDGE_EXPOSED_LISTENERS: 'agent' }),
    );
  },
);

t.test('runService and runWorkerProcess refuse before anything listens', async (t) => {
  const saved = { NODE_ENV: process.env.NODE_ENV, OPS_HOST: process.env.OPS_HOST, OPS_PORT: process.env.OPS_PORT };
  t.teardown(() => {
    for (const [key, value] of Object.entries(saved))
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
  });
  delete process.env.NODE_ENV;
  delete process.env.OPS_HOST;
  process.env.OPS_PORT = '0';

  const app = Fastify();
  app.decorate('serviceName', 'auth');
  t.teardown(() => app.close());
  await t.rejects(runService(app, { host: '0.0.0.0', port: 0 }), {
    name: /^ConfigError$/,
    message: /0\.0\.0\.0 \(auth\)/,
  });
  t.equal(app.server.listening, false, 'the service never listened');

  process.env.OPS_HOST = '0.0.0.0';
  let started = false;
  await t.rejects(
    runWorkerProcess('auth-worker', 'silent', () => {
      started = true;
      return { close: async () => {} };
    }),
    { name: /^ConfigError$/, message: /0\.0\.0\.0 \(operations\)/ },
  );
  t.equal(started, false, "the worker's operations listener is refused before its workers start");
});
