import t from 'tap';
import { build } from './helper.ts';
import { backend } from './agents-harness.ts';

// The runtime's version route says whether the engine agents run on answers now (the edge's backend
// /health reports it as `docker`): asked of the engine itself, not remembered from an earlier answer.
const version = async (env: Record<string, string>) => {
  const app = await build(t, env);
  const res = await app.inject({ method: 'GET', url: '/api/runtime/version', headers: backend() });
  await app.close();
  return { status: res.statusCode, body: res.json() };
};

t.test('a container engine that does not answer: unreachable, its version unknown', async (t) => {
  const { status, body } = await version({
    RUNTIME_DRIVER: 'docker',
    DOCKER_HOST: 'unix:///nonexistent/agentyard-engine.sock',
    PROVISIONING_ENABLED: 'false',
  });
  t.equal(status, 200);
  t.has(body, { driver: 'docker', engine: 'unavailable', version: 'unknown', reachable: false });
});

t.test('agents run as processes: no engine to ask, reachable while the service runs', async (t) => {
  const { body } = await version({ RUNTIME_DRIVER: 'process', PROVISIONING_ENABLED: 'false' });
  t.has(body, { driver: 'process', reachable: true });
});
