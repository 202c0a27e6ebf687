import t from 'tap';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import Docker from 'dockerode';
import { LABELS } from '@agentyard/runtime';
import { execIn, startAgents, web } from '../agents-harness.ts';
import { lifecycleScenario } from '../agents-lifecycle-scenario.ts';

// The docker driver against the real engine (Podman's Docker API here), with the minimal gateway
// image: every lifecycle step is observed on the container itself through the engine's own API.
const MINIMAL = 'localhost/agentyard-gateway-minimal:1';

t.test(
  'docker driver: the whole agent lifecycle on real containers',
  { skip: process.env.RUNTIME_DRIVER !== 'docker' && 'no container engine' },
  async (t) => {
    const docker = new Docker({ socketPath: process.env.DOCKER_HOST!.replace('unix://', '') });
    const updateTag = `update-${randomBytes(4).toString('hex')}`;
    await docker.getImage(MINIMAL).tag({ repo: 'localhost/agentyard-gateway-minimal', tag: updateTag });
    t.teardown(() =>
      docker
        .getImage(`localhost/agentyard-gateway-minimal:${updateTag}`)
        .remove()
        .catch(() => undefined),
    );
    const h = await startAgents(t, {
      AGENT_IMAGE: MINIMAL,
      AGENT_PORT_RANGE: '33000-33999',
      AGENT_READY_TIMEOUT_MS: '20000',
    });

    const containers = (agentId: string) =>
      docker.listContainers({
        all: true,
        filters: { label: [`${LABELS.agentId}=${agentId}`, `${LABELS.instance}=${h.config.RUNTIME_INSTANCE}`] },
      });
    const exec = async (agentId: string, cmd: string[]) => execIn(docker, (await containers(agentId))[0]!.Id, cmd);

    await lifecycleScenario(
      t,
      h,
      {
        async state(agentId) {
          const list = await containers(agentId);
          if (list.length === 0) return 'absent';
          return list.some((c) => c.State === 'running') ? 'running' : 'stopped';
        },
        async image(agentId) {
          const running = (await containers(agentId)).find((c) => c.State === 'running');
          return running ? (await docker.getContainer(running.Id).inspect()).Config.Image : null;
        },
        async writeMemory(agentId) {
          t.equal(await exec(agentId, ['sh', '-c', 'echo tea > /home/node/.openclaw/MEMORY.md']), 0);
        },
        async memoryExists(agentId) {
          return (await exec(agentId, ['test', '-f', '/home/node/.openclaw/MEMORY.md'])) === 0;
        },
        async configText(agentId) {
          // The engine runs locally here: the container's read-only config directory is a host directory.
          const binds =
            (await docker.getContainer((await containers(agentId))[0]!.Id).inspect()).HostConfig.Binds ?? [];
          const configDir = binds.map((b) => b.split(':')).find(([, inside]) => inside === '/run/agentyard')![0]!;
          return readFile(join(configDir, 'openclaw.json'), 'utf8');
        },
      },
      { good: `localhost/agentyard-gateway-minimal:${updateTag}`, broken: 'localhost/agentyard-no-such-image:1' },
    );

    await t.test('containers are hardened and carry no platform secret', async (t) => {
      const owner = await h.subscribedUser('solo');
      const res = await h.app.inject({
        method: 'POST',
        url: '/api/agents/provision',
        headers: web(owner),
        payload: { name: 'hardened', tier: 'starter' },
      });
      const id = res.json().agent.id;
      t.match(await h.provisioned(id), /^running/);
      const [c] = await containers(id);
      const info = await docker.getContainer(c!.Id).inspect();
      // Docker reports ['ALL']; Podman lists every default capability it dropped.
      const dropped = new Set((info.HostConfig.CapDrop ?? []).map((cap: string) => cap.replace(/^CAP_/, '')));
      t.ok(
        dropped.has('ALL') ||
          [
            'CHOWN',
            'DAC_OVERRIDE',
            'FOWNER',
            'KILL',
            'NET_BIND_SERVICE',
            'NET_RAW',
            'SETGID',
            'SETUID',
            'SYS_CHROOT',
          ].every((cap) => dropped.has(cap)),
        'all capabilities dropped',
      );
      t.same(info.HostConfig.CapAdd ?? [], [], 'none added');
      t.ok(
        info.HostConfig.SecurityOpt?.some((o: string) => o.startsWith('no-new-privileges')),
        'no-new-privileges',
      );
      t.equal(info.HostConfig.Init, true, 'an init process');
      t.ok(info.HostConfig.PidsLimit && info.HostConfig.PidsLimit > 0, 'a pid limit');
      t.equal(info.HostConfig.Memory, 2 * 1024 ** 3, 'starter: 2 GB');
      t.notOk(
        info.HostConfig.Binds?.some((b) => b.includes('.sock')),
        'no engine socket inside',
      );
      const env = (info.Config.Env ?? []).join('\n');
      for (const secret of [
        process.env.DATABASE_URL!,
        process.env.INTERNAL_API_KEY!,
        process.env.ENCRYPTION_KEYS!,
        process.env.IDENTITY_SECRET!,
      ]) {
        t.notOk(env.includes(secret), 'no platform secret in the environment');
      }
      const row = (await h.agentRow(id))!;
      t.equal(row.tools_profile, 'messaging', 'solo agents get the messaging profile');
    });
  },
);
