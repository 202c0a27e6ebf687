import t from 'tap';
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Docker from 'dockerode';
import { AgentControlClient, AgentControlError, platformDeviceSeed, probeAgent } from '../../src/index.ts';

// The real OpenClaw image in a container, reached through its published port (never loopback from
// the gateway's side): the platform's device is paired on first connect, then calls are typed.
const IMAGE = 'localhost/agentyard-openclaw:2026.9.6';
t.setTimeout(600_000);
t.test(
  'the control-plane client pairs its device and calls the real gateway',
  { skip: process.env.RUNTIME_DRIVER !== 'docker' && 'no container engine' },
  async (t) => {
    const docker = new Docker({ socketPath: process.env.DOCKER_HOST!.replace('unix://', '') });
    const dir = await mkdtemp(join(tmpdir(), 'agentyard-control-'));
    t.teardown(() => rm(dir, { recursive: true, force: true }));
    const token = randomBytes(24).toString('hex');
    await writeFile(
      join(dir, 'openclaw.json'),
      JSON.stringify({
        agents: { defaults: { workspace: '/home/node/.openclaw/workspace' } },
        gateway: { mode: 'local', bind: 'lan', port: 18789, auth: { mode: 'token', token } },
        plugins: { entries: { 'admin-http-rpc': { enabled: true } } },
      }),
    );
    await chmod(dir, 0o755);
    const container = await docker.createContainer({
      Image: IMAGE,
      name: `agentyard-control-test-${randomBytes(3).toString('hex')}`,
      Env: ['HOME=/home/node', 'OPENCLAW_CONFIG_PATH=/cfg/openclaw.json'],
      ExposedPorts: { '18789/tcp': {} },
      HostConfig: {
        Init: true,
        Binds: [`${dir}:/cfg:ro`],
        PortBindings: { '18789/tcp': [{ HostIp: '127.0.0.1', HostPort: '' }] },
      },
    });
    t.teardown(() => container.remove({ force: true }));
    await container.start();
    const port = (await container.inspect()).NetworkSettings.Ports['18789/tcp']![0]!.HostPort;
    const baseUrl = `http://127.0.0.1:${port}`;
    // The gateway's own readiness, polled as the platform's runtime does until it answers ready.
    for (let probe = await probeAgent(baseUrl); probe.ready !== true; probe = await probeAgent(baseUrl))
      await new Promise((r) => setTimeout(r, 1000));

    const deviceSeed = platformDeviceSeed(token, 'agent-1');
    await t.rejects(
      AgentControlClient.connect({ baseUrl, gatewayToken: 'wrong-token', deviceSeed }),
      AgentControlError,
      'a wrong token is refused',
    );

    const client = await AgentControlClient.connect({ baseUrl, gatewayToken: token, deviceSeed });
    t.teardown(() => client.close());
    t.same(
      [...client.scopes].sort(),
      ['operator.admin', 'operator.pairing', 'operator.read', 'operator.write'],
      'full operator scopes once paired',
    );
    await client.call('agents.files.set', { agentId: 'main', name: 'MEMORY.md', content: 'kettle on\n' });
    const { file } = await client.call('agents.files.get', { agentId: 'main', name: 'MEMORY.md' });
    t.equal(file.content, 'kettle on\n', 'a file written is read back');
    const err = await client
      .call('agents.files.get', { agentId: 'main', name: '../etc/passwd' })
      .catch((e: unknown) => e);
    t.ok(
      err instanceof AgentControlError && err.code === 'INVALID_REQUEST',
      'an error frame is an AgentControlError with its code',
    );
    const { paired } = await client.call('device.pair.list', {});
    t.ok(
      paired.some((d) => d.deviceId === client.deviceId),
      "the platform's device is paired",
    );
    const skills = await client.call('skills.status', {});
    t.ok(
      skills.skills.some((s) => s.bundled),
      'the bundled skills',
    );
    client.close();
    await t.rejects(client.call('skills.status', {}), /closed/, 'a closed client refuses calls');

    const again = await AgentControlClient.connect({ baseUrl, gatewayToken: token, deviceSeed });
    t.equal(again.deviceId, client.deviceId, 'the same seed is the same device: no second pairing');
    again.close();
  },
);
