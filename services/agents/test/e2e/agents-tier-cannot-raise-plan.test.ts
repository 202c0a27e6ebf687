import t from 'tap';
import { randomBytes } from 'node:crypto';
import Docker from 'dockerode';
import { LABELS } from '@agentyard/runtime';
import { createUserRow, subscribeUser, systemDb } from '@agentyard/testing';
import { backend, execIn, startAgents, web } from '../agents-harness.ts';
import { build } from '../helper.ts';

// Regression (issue 17): a solo subscriber asking `tier: enterprise` got a network-plan agent with
// the coding profile and 16 GB / 4 CPU. The plan, profile and resources follow the user's current
// plan; a tier can only lower them.
const GB = 1024 ** 3;
const own = () => ({
  QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}-tier${randomBytes(3).toString('hex')}`,
  RUNTIME_DRIVER: 'process',
});
const agentRow = (id: string) =>
  systemDb()
    .selectFrom('agents')
    .select(['plan', 'tools_profile', 'tier'])
    .where('id', '=', id)
    .executeTakeFirstOrThrow();

t.test('a tier never raises the plan or the tools profile; it may lower them', async (t) => {
  const app = await build(t, own());
  const provision = (user: { id: string; email: string }, tier?: string) =>
    app.inject({
      method: 'POST',
      url: '/api/agents/provision',
      headers: web(user),
      payload: { name: `asks ${tier ?? 'nothing'}`, ...(tier ? { tier } : {}) },
    });

  const solo = await createUserRow({ plan: 'solo' });
  const greedy = await provision(solo, 'enterprise');
  t.equal(greedy.statusCode, 201, greedy.body);
  t.has(
    await agentRow(greedy.json().agent.id),
    { plan: 'solo', tools_profile: 'messaging', tier: 'enterprise' },
    'solo asking enterprise: a solo agent',
  );

  const label = await createUserRow({ plan: 'label' });
  for (const [tier, plan, profile] of [
    ['starter', 'solo', 'messaging'],
    ['pro', 'collective', 'coding'],
    ['enterprise', 'label', 'coding'],
    [undefined, 'label', 'coding'],
  ] as const) {
    const res = await provision(label, tier);
    t.equal(res.statusCode, 201, res.body);
    t.match(
      await agentRow(res.json().agent.id),
      { plan, tools_profile: profile },
      `label asking ${tier ?? 'no tier'}: ${plan}`,
    );
  }
});

t.test(
  'the plan follows the subscription: a cancelled subscription provisions nothing, a new one its own plan',
  async (t) => {
    const app = await build(t, own());
    const user = await createUserRow();
    const subscription = await subscribeUser(user.id, 'collective');
    const first = await app.inject({
      method: 'POST',
      url: '/api/agents/provision',
      headers: web(user),
      payload: { name: 'first', tier: 'enterprise' },
    });
    t.has(await agentRow(first.json().agent.id), { plan: 'collective', tools_profile: 'coding' });
    await systemDb().updateTable('subscriptions').set({ status: 'canceled' }).where('id', '=', subscription).execute();
    const refused = await app.inject({
      method: 'POST',
      url: '/api/agents/provision',
      headers: web(user),
      payload: { name: 'second' },
    });
    t.equal(refused.statusCode, 403, 'no active subscription, no plan');
  },
);

t.test(
  'container resources follow the lowered plan (real engine)',
  { skip: process.env.RUNTIME_DRIVER !== 'docker' && 'no container engine' },
  async (t) => {
    const docker = new Docker({ socketPath: process.env.DOCKER_HOST!.replace('unix://', '') });
    const h = await startAgents(t, {
      AGENT_IMAGE: 'localhost/agentyard-gateway-minimal:1',
      AGENT_PORT_RANGE: '39600-39699',
      AGENT_READY_TIMEOUT_MS: '60000',
    });
    const user = await h.subscribedUser('solo');
    const res = await h.app.inject({
      method: 'POST',
      url: '/api/agents/provision',
      headers: web(user),
      payload: { name: 'big ask', tier: 'enterprise' },
    });
    t.equal(res.statusCode, 201, res.body);
    const id = res.json().agent.id as string;
    t.match(await h.provisioned(id), /^running/);
    const [container] = await docker.listContainers({
      all: true,
      filters: { label: [`${LABELS.instance}=${h.config.RUNTIME_INSTANCE}`], name: [`agentyard-agent-${id}-`] },
    });
    const info = await docker.getContainer(container!.Id).inspect();
    t.equal(info.HostConfig.Memory, 2 * GB, "the solo plan's 2 GB, not enterprise's 16 GB");
    t.equal(info.HostConfig.NanoCpus, 1e9, 'one CPU');
  },
);

t.test(
  "an agent's size follows its owner's plan at its next start, its files kept (real engine)",
  { skip: process.env.RUNTIME_DRIVER !== 'docker' && 'no container engine' },
  async (t) => {
    const docker = new Docker({ socketPath: process.env.DOCKER_HOST!.replace('unix://', '') });
    const h = await startAgents(t, {
      AGENT_IMAGE: 'localhost/agentyard-gateway-minimal:1',
      AGENT_PORT_RANGE: '39700-39799',
      AGENT_READY_TIMEOUT_MS: '60000',
    });
    const user = await h.subscribedUser('collective');
    const res = await h.app.inject({
      method: 'POST',
      url: '/api/agents/provision',
      headers: web(user),
      payload: { name: 'grows' },
    });
    t.equal(res.statusCode, 201, res.body);
    const id = res.json().agent.id as string;
    t.match(await h.provisioned(id), /^running/);
    const container = async () => {
      const { container_id } = await systemDb()
        .selectFrom('agents')
        .select('container_id')
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      return docker.getContainer(container_id!).inspect();
    };
    const before = await container();
    t.equal(before.HostConfig.Memory, 4 * GB, "collective's 4 GB");
    const kept = `kept-${randomBytes(4).toString('hex')}`;
    t.equal(
      await execIn(docker, before.Id, ['sh', '-c', `echo ${kept} > /home/node/.openclaw/kept.txt`]),
      0,
      'a file on its state disk',
    );
    const operate = async (action: string) => {
      const answer = await h.app.inject({ method: 'POST', url: `/api/agents/${id}/${action}`, headers: backend(user) });
      t.equal(answer.statusCode, 200, `${action}: ${answer.body}`);
    };
    await operate('stop');
    // Upgraded to label while it was stopped: the next start makes its container at label's size.
    await systemDb().updateTable('subscriptions').set({ plan: 'label' }).where('user_id', '=', user.id).execute();
    await operate('start');
    const after = await container();
    t.not(after.Id, before.Id, 'a new container');
    t.equal(after.HostConfig.Memory, 8 * GB, "label's 8 GB");
    const hostCpus = ((await docker.info()) as { NCPU: number }).NCPU;
    t.equal(after.HostConfig.NanoCpus, Math.min(4, hostCpus) * 1e9, "label's four CPUs (no more than the host has)");
    t.has(await agentRow(id), { plan: 'label', tools_profile: 'coding' });
    t.equal(
      await execIn(docker, after.Id, ['sh', '-c', `grep -q ${kept} /home/node/.openclaw/kept.txt`]),
      0,
      'its file is still there',
    );
    // Down to solo: a restart follows too.
    await systemDb().updateTable('subscriptions').set({ plan: 'solo' }).where('user_id', '=', user.id).execute();
    await operate('restart');
    const down = await container();
    t.equal(down.HostConfig.Memory, 2 * GB, "solo's 2 GB");
    t.has(await agentRow(id), { plan: 'solo', tools_profile: 'messaging' });
    // The same plan again: the container stays.
    await operate('restart');
    t.equal((await container()).Id, down.Id, 'no new container when the plan is unchanged');
  },
);

t.test(
  'an update rolled back leaves the row on the plan of the container that runs (real engine)',
  { skip: process.env.RUNTIME_DRIVER !== 'docker' && 'no container engine' },
  async (t) => {
    const docker = new Docker({ socketPath: process.env.DOCKER_HOST!.replace('unix://', '') });
    const h = await startAgents(t, {
      AGENT_IMAGE: 'localhost/agentyard-gateway-minimal:1',
      AGENT_PORT_RANGE: '39900-39949',
      AGENT_READY_TIMEOUT_MS: '60000',
    });
    const user = await h.subscribedUser('collective');
    const res = await h.app.inject({
      method: 'POST',
      url: '/api/agents/provision',
      headers: web(user),
      payload: { name: 'stays' },
    });
    t.equal(res.statusCode, 201, res.body);
    const id = res.json().agent.id as string;
    t.match(await h.provisioned(id), /^running/);
    const { container_id: before } = await systemDb()
      .selectFrom('agents')
      .select('container_id')
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    // Down to solo, then an update to an image that cannot start: the collective container comes back.
    await systemDb().updateTable('subscriptions').set({ plan: 'solo' }).where('user_id', '=', user.id).execute();
    const update = await h.app.inject({
      method: 'POST',
      url: `/api/agents/${id}/update`,
      headers: backend(user),
      payload: { image: 'localhost/agentyard-no-such-image:1' },
    });
    t.equal(update.statusCode, 500, update.body);
    t.match(update.json(), { error: /previous image was restored/ });
    const running = await docker.getContainer(before!).inspect();
    t.ok(running.State.Running, 'the previous container runs again');
    t.equal(running.HostConfig.Memory, 4 * GB, "at collective's 4 GB");
    t.has(
      await agentRow(id),
      { plan: 'collective', tools_profile: 'coding' },
      'and the row says collective, as that container was made',
    );
  },
);
