import t from 'tap';
import { access } from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import Docker from 'dockerode';
import { openAgentSecret } from '@agentyard/agent-gateway';
import { parseKeyring } from '@agentyard/crypto';
import { LABELS, resourcesFor } from '@agentyard/runtime';
import { createRuntimeContext } from '../../src/domain/runtime/privileged/runtime-context.ts';
import { backend, execIn, startAgents, web } from '../agents-harness.ts';

// Warm containers on the real engine (Podman's Docker API here), minimal gateway image: started
// before any agent, holding no secret, handed to new agents with their config, then replaced.
const MINIMAL = 'localhost/agentyard-gateway-minimal:1';
const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

t.test(
  'warm containers: claimed by new agents, refilled, cleaned up',
  { skip: process.env.RUNTIME_DRIVER !== 'docker' && 'no container engine' },
  async (t) => {
    const docker = new Docker({ socketPath: process.env.DOCKER_HOST!.replace('unix://', '') });
    const h = await startAgents(t, {
      AGENT_IMAGE: MINIMAL,
      AGENT_PORT_RANGE: '39000-39999',
      AGENT_READY_TIMEOUT_MS: '60000',
      RUNTIME_WARM_POOL: 'solo=2',
      RUNTIME_WARM_BOOT: 'on-claim',
    });
    const instance = h.config.RUNTIME_INSTANCE;
    // Still waiting: started warm and not yet renamed for an agent.
    const waiting = () =>
      docker.listContainers({
        all: true,
        filters: { label: [`${LABELS.instance}=${instance}`, LABELS.warm], name: [`agentyard-warm-${instance}-`] },
      });
    const ofAgent = (agentId: string) =>
      docker.listContainers({
        all: true,
        filters: { label: [`${LABELS.instance}=${instance}`], name: [`agentyard-agent-${agentId}-`] },
      });
    const exec = (containerId: string, cmd: string[]) => execIn(docker, containerId, cmd);

    await h.runtime.topUpWarm();
    const warm = await waiting();
    t.equal(warm.length, 2, 'two containers wait');
    t.ok(
      warm.every((c) => c.State === 'running'),
      'started',
    );
    for (const c of warm) {
      const info = await docker.getContainer(c.Id).inspect();
      const env = (info.Config.Env ?? []).join('\n');
      for (const secret of [process.env.DATABASE_URL!, process.env.ENCRYPTION_KEYS!, process.env.IDENTITY_SECRET!])
        t.notOk(env.includes(secret), 'no platform secret');
      t.equal(info.HostConfig.Memory, resourcesFor('solo').memoryBytes, "the solo plan's resources");
      t.equal(info.HostConfig.Init, true);
      t.equal(await exec(c.Id, ['test', '-e', '/run/agentyard/openclaw.json']), 1, 'no config yet');
      const port = c.Ports.find((p) => p.PrivatePort === 18789)?.PublicPort;
      t.ok(port, 'published on a port the engine chose');
      t.notOk(
        await fetch(`${h.driver.gatewayUrl(port!, '')}/healthz`, { signal: AbortSignal.timeout(2000) }).then(
          (r) => r.ok,
          () => false,
        ),
        'no gateway runs before an agent claims it',
      );
    }

    // Three new agents at once: two get the waiting containers, the third a container of its own.
    const users = await Promise.all([1, 2, 3].map(() => h.subscribedUser('solo')));
    const ids = await Promise.all(
      users.map(async (user, i) => {
        const res = await h.app.inject({
          method: 'POST',
          url: '/api/agents/provision',
          headers: web(user),
          payload: { name: `warm ${i}`, tier: 'starter' },
        });
        t.equal(res.statusCode, 201, res.body);
        return res.json().agent.id as string;
      }),
    );
    for (const id of ids) t.match(await h.provisioned(id), /^running/);
    const rows = await Promise.all(ids.map(async (id) => (await h.agentRow(id))!));
    const warmIds = new Set(warm.map((c) => c.Id));
    t.equal(rows.filter((r) => warmIds.has(r.container_id!)).length, 2, 'two agents run in the warm containers');
    t.equal(new Set(rows.map((r) => r.host_port)).size, 3, 'distinct ports');

    const keyring = parseKeyring(h.config.ENCRYPTION_KEYS);
    for (const row of rows) {
      t.equal(row.status, 'running');
      const [container] = await ofAgent(row.id);
      t.equal(container?.Id, row.container_id, 'the container is named for its agent');
      t.equal(
        container?.Ports.find((p) => p.PrivatePort === 18789)?.PublicPort,
        row.host_port,
        'the row holds the published port',
      );
      const hooksToken = openAgentSecret(keyring, row.id, 'hooks-token', row.hooks_token_sealed!);
      const wake = (token: string) =>
        fetch(`${row.gateway_url}/hooks/wake`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ text: 'hi', mode: 'now' }),
        });
      t.equal((await wake(hooksToken)).status, 200, "the gateway runs with the agent's own config");
      t.equal((await wake('wrong')).status, 401);
      const health = await h.app.inject({
        method: 'GET',
        url: `/api/runtime/proxy/${row.id}/healthz`,
        headers: backend(users[ids.indexOf(row.id)]),
      });
      t.equal(health.statusCode, 200, 'the runtime proxy reaches it');
    }
    const listed = await h.app.inject({ method: 'GET', url: '/api/runtime/instances', headers: backend(users[0]) });
    t.same(
      listed.json().instances.map((i: { metadata: { agentId: string } }) => i.metadata.agentId),
      [ids[0]],
      'a user lists only their own, warm-born or not',
    );

    await h.runtime.topUpWarm();
    const refilled = await waiting();
    t.equal(refilled.length, 2, 'refilled to two', { found: refilled.map((c) => [c.Names, c.State]) });
    t.notOk(
      refilled.some((c) => warmIds.has(c.Id)),
      'with new containers',
    );

    await t.test(
      'a warm-born agent keeps its memory through repair, loses it on reset, leaves nothing when deleted',
      async (t) => {
        const row = rows.find((r) => warmIds.has(r.container_id!))!;
        const owner = users[ids.indexOf(row.id)]!;
        const stateDir = (await docker.getContainer(row.container_id!).inspect()).HostConfig.Binds!.find(
          (b) => b.split(':')[1] === '/home/node/.openclaw',
        )!.split(':')[0]!;
        const current = async () => (await ofAgent(row.id))[0]!.Id;
        t.equal(await exec(await current(), ['sh', '-c', 'echo tea > /home/node/.openclaw/MEMORY.md']), 0);
        const act = (action: string) =>
          h.app.inject({ method: 'POST', url: `/api/agents/${row.id}/${action}`, headers: backend(owner) });
        t.equal((await act('stop')).statusCode, 200);
        t.equal((await docker.getContainer(row.container_id!).inspect()).State.Status, 'exited', 'stopped');
        t.equal((await act('start')).statusCode, 200);
        t.equal(
          (await docker.getContainer(row.container_id!).inspect()).State.Status,
          'running',
          'started again, the same container',
        );
        t.equal(await exec(row.container_id!, ['test', '-f', '/home/node/.openclaw/MEMORY.md']), 0, 'with its memory');
        t.equal((await act('repair')).statusCode, 200);
        t.not(await current(), row.container_id, 'repair made a new container');
        t.equal(
          await exec(await current(), ['test', '-f', '/home/node/.openclaw/MEMORY.md']),
          0,
          'which mounts the same memory',
        );
        t.equal((await act('reset-memory')).statusCode, 200);
        t.equal(await exec(await current(), ['test', '-f', '/home/node/.openclaw/MEMORY.md']), 1, 'reset-memory: gone');
        const deleted = await h.app.inject({ method: 'DELETE', url: `/api/agents/${row.id}`, headers: backend(owner) });
        t.equal(deleted.statusCode, 200);
        t.same(await ofAgent(row.id), [], 'no container left');
        t.notOk(await exists(stateDir), 'no state left');
      },
    );

    await t.test('two processes claim the last waiting container: one wins', async (t) => {
      // A second runtime on the same engine and host, as a second worker process would have.
      const other = createRuntimeContext(h.config, { warn() {}, error() {} });
      t.teardown(() => other.close());
      await h.driver.warm!.topUp([{ image: MINIMAL, resources: resourcesFor('solo'), count: 1 }]);
      t.equal((await waiting()).length, 1);
      const spec = (agentId: string) => ({
        agentId,
        userId: randomUUID(),
        image: MINIMAL,
        config: '{}',
        resources: resourcesFor('solo'),
      });
      const a = randomUUID();
      const b = randomUUID();
      const claims = await Promise.all([h.driver.warm!.claim(spec(a)), other.driver.warm!.claim(spec(b))]);
      t.equal(claims.filter(Boolean).length, 1, 'exactly one claim succeeds');
      const winner = claims[0] ? a : b;
      await claims.find(Boolean)!.named();
      t.equal((await ofAgent(winner)).length, 1, 'named for the winner');
      t.same(await ofAgent(winner === a ? b : a), []);
      t.same(await waiting(), [], 'none waits any more');
      for (const c of await ofAgent(winner)) await h.driver.remove(c.Id);
      await h.driver.removeState(winner);
    });
  },
);
