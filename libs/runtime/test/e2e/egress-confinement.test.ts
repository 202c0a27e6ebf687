import { randomBytes, randomUUID } from 'node:crypto';
import { repoRoot } from '@agentyard/config';
import { createRuntimeDriver, type RuntimeSettings, resourcesFor, verifyEgressGrant } from '@agentyard/runtime';
import Docker from 'dockerode';
import t, { type Test } from 'tap';

// Issue 27 (N8): under Docker (and rootless Podman) production agents ran with open egress and only
// a warning. Now the driver refuses to create an agent container in production unless its egress is
// confined (an internal network, or the host's egress rules), or the operator opted out explicitly.
// Real networks and containers on the machine's engine.
const MINIMAL = 'localhost/agentyard-gateway-minimal:1';
const noEngine = process.env.RUNTIME_DRIVER !== 'docker' && 'no container engine';
t.setTimeout(300_000);

const docker = () => new Docker({ socketPath: process.env.DOCKER_HOST!.replace('unix://', '') });

/** A network of this test's own, removed with the test. */
async function ownNetwork(t: Test, internal: boolean): Promise<string> {
  const name = `agentyard-egress-test-${randomBytes(4).toString('hex')}`;
  await docker().createNetwork({ Name: name, Internal: internal });
  t.teardown(() =>
    docker()
      .getNetwork(name)
      .remove()
      .catch(() => undefined),
  );
  return name;
}

/** A driver as the agents service builds it (createRuntimeDriver), with `settings` over these. */
function driverWith(t: Test, settings: Partial<RuntimeSettings>) {
  const driver = createRuntimeDriver({
    RUNTIME_DRIVER: 'docker',
    DOCKER_HOST: process.env.DOCKER_HOST!,
    RUNTIME_INSTANCE: `egress-${randomBytes(4).toString('hex')}`,
    AGENT_IMAGE: MINIMAL,
    RUNTIME_PUBLISH_HOST: '127.0.0.1',
    RUNTIME_DATA_DIR: '',
    RUNTIME_STOP_TIMEOUT_SECONDS: 2,
    RUNTIME_ENGINE_TIMEOUT_MS: 30_000,
    RUNTIME_PIDS_LIMIT: 256,
    RUNTIME_NETWORK_MODE: '',
    // Configs through the engine API, state in named volumes: nothing of the host is needed.
    RUNTIME_CONFIG_DIR: '',
    repoRoot,
    NODE_ENV: 'production',
    ...settings,
  });
  t.teardown(async () => {
    for (const c of await driver.list()) {
      await driver.remove(c.id);
      await driver.removeState(c.agentId);
    }
    await driver.close();
  });
  return driver;
}

const spec = () => ({
  agentId: randomUUID(),
  userId: randomUUID(),
  image: MINIMAL,
  hostPort: 0,
  resources: resourcesFor('solo'),
  config: '{}',
});

t.test('production creates no agent container whose egress is not confined', { skip: noEngine }, async (t) => {
  const open = await ownNetwork(t, false);
  const driver = driverWith(t, { RUNTIME_NETWORK: open });
  await t.rejects(
    driver.create(spec()),
    {
      name: /^RuntimeError$/,
      message: new RegExp(
        `agents' egress is not confined: the network ${open} is not internal.*RUNTIME_EGRESS_UNCONFINED=true`,
      ),
    },
    'on a network that routes anywhere',
  );
  t.same(await driver.list(), [], 'no container was made');

  const bridge = driverWith(t, {});
  await t.rejects(
    bridge.create(spec()),
    { message: /agents' egress is not confined: agents get the engine's default network/ },
    "on the engine's default bridge",
  );
  t.same(await bridge.list(), []);

  const slirp = driverWith(t, {
    RUNTIME_NETWORK_MODE: 'slirp4netns:allow_host_loopback=false,outbound_addr=198.18.254.9',
  });
  await t.rejects(
    slirp.create(spec()),
    { message: /no egress rules for the agents' outbound address 198\.18\.254\.9/ },
    'on a user-mode network no host rules confine',
  );
});

t.test(
  'confined egress, an explicit opt-out, or outside production: agents are created',
  { skip: noEngine },
  async (t) => {
    const internal = await ownNetwork(t, true);
    const confined = driverWith(t, {
      RUNTIME_NETWORK: internal,
      RUNTIME_EGRESS_PROXY: 'http://egress:3128',
      AGENT_AI_GATEWAY_URL: 'http://egress:3002',
    });
    const id = await confined.create(spec());
    const env = (await docker().getContainer(id).inspect()).Config.Env;
    t.ok(
      env.includes('HTTPS_PROXY=http://egress:3128') && env.includes('NODE_USE_ENV_PROXY=1'),
      "the agent's traffic goes through the egress proxy",
    );
    t.ok(env.includes('NO_PROXY=localhost,127.0.0.1,::1,egress'), 'except to the AI gateway');

    const open = await ownNetwork(t, false);
    t.ok(
      await driverWith(t, { RUNTIME_NETWORK: open, RUNTIME_EGRESS_UNCONFINED: true }).create(spec()),
      'the documented opt-out',
    );
    t.ok(
      await driverWith(t, { RUNTIME_NETWORK: open, NODE_ENV: 'test' }).create(spec()),
      'development and tests are not checked',
    );
  },
);

// Issue 29: with a grant key each agent's proxy URL carries its own grant of its channels' hosts.
t.test("each agent's proxy URL carries its grant of its channels' hosts", { skip: noEngine }, async (t) => {
  const internal = await ownNetwork(t, true);
  const key = randomBytes(32).toString('base64url');
  const driver = driverWith(t, {
    RUNTIME_NETWORK: internal,
    RUNTIME_EGRESS_PROXY: 'http://egress:3128',
    AGENT_AI_GATEWAY_URL: 'http://egress:3002',
    EGRESS_GRANT_KEY: key,
  });
  const proxyOf = async (agent: ReturnType<typeof spec>) => {
    const env = (
      await docker()
        .getContainer(await driver.create(agent))
        .inspect()
    ).Config.Env;
    const https = new URL(env.find((e) => e.startsWith('HTTPS_PROXY='))!.slice('HTTPS_PROXY='.length));
    t.ok(env.includes(`HTTP_PROXY=${https.href.replace(/\/$/, '')}`), 'the same for plain HTTP');
    return https;
  };
  const telegram = { ...spec(), egressHosts: ['api.telegram.org'] };
  const url = await proxyOf(telegram);
  t.equal(url.host, 'egress:3128');
  t.equal(url.username, telegram.agentId, "the agent's own id");
  t.same(
    verifyEgressGrant(key, telegram.agentId, url.password),
    ['api.telegram.org'],
    'a grant of its channel hosts under the key',
  );
  const none = spec();
  const noChannel = await proxyOf(none);
  t.same(verifyEgressGrant(key, none.agentId, noChannel.password), [], 'an agent without channels is granted nothing');
  t.equal(verifyEgressGrant(key, none.agentId, url.password), null, "one agent's grant is not another's");
});
