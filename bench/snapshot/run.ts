// bench/snapshot: how long a snapshot keeps an agent paused. A container of the minimal gateway
// image with a state directory of the given size bind-mounted (random bytes: gzip's worst case,
// plus a SQLite file), frozen with the engine's pause, its state packed by packAgentState into the
// directory snapshot store, then unpaused: the pause is the engine's pause call to its unpause.
// Usage: node bench/snapshot/run.ts [--mb 1,50,200] [--rounds 5]
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import Docker from 'dockerode';
import { packAgentState, SNAPSHOT_FORMAT } from '@agentyard/runtime';
import { preparePlatformExtras } from '../../scripts/lib/extras.ts';
import { directorySnapshotStore } from '../../services/agents/src/domain/runtime/snapshot-store.ts';

const { values } = parseArgs({
  options: { mb: { type: 'string', default: '1,50,200' }, rounds: { type: 'string', default: '5' } },
});
const sizes = values.mb.split(',').map(Number);
const rounds = Number(values.rounds);
const IMAGE = 'localhost/agentyard-gateway-minimal:1';
const MB = 1024 ** 2;
const env = { ...(process.env as Record<string, string>) };
Object.assign(env, await preparePlatformExtras({ ...env, NODE_ENV: 'test' }));
if (env.RUNTIME_DRIVER !== 'docker') throw new Error('bench/snapshot needs a container engine');
const docker = new Docker({ socketPath: env.DOCKER_HOST!.replace('unix://', '') });
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const root = await mkdtemp(join(tmpdir(), 'agentyard-bench-snapshot-'));
const store = directorySnapshotStore(join(root, 'store'));
const manifest = {
  format: SNAPSHOT_FORMAT,
  agentId: randomUUID(),
  openclawVersion: null,
  createdAt: new Date().toISOString(),
  reason: 'manual',
  label: null,
  config: {},
  skills: [],
  channels: [],
} as const;

try {
  for (const mb of sizes) {
    const state = join(root, `state-${mb}`);
    await mkdir(join(state, 'workspace/memory'), { recursive: true });
    // A few large files and many small ones, as an agent's state holds.
    for (let i = 0; i < 4; i++)
      await writeFile(join(state, `workspace/memory/blob-${i}.bin`), randomBytes(Math.floor((mb * MB * 0.9) / 4)));
    for (let i = 0; i < 200; i++)
      await writeFile(
        join(state, `workspace/memory/note-${i}.md`),
        randomBytes(Math.floor((mb * MB * 0.1) / 200)).toString('base64'),
      );
    const container = await docker.createContainer({
      Image: IMAGE,
      Entrypoint: ['node', '-e', 'setInterval(() => {}, 1e9)'],
      name: `bench-snapshot-${mb}-${randomBytes(3).toString('hex')}`,
      HostConfig: { Binds: [`${state}:/home/node/.openclaw`], Init: true },
    });
    await container.start();
    const paused: number[] = [];
    const sizesOut: number[] = [];
    try {
      for (let r = 0; r < rounds; r++) {
        const t0 = performance.now();
        await container.pause();
        try {
          const stored = await store.put(
            randomUUID(),
            packAgentState({
              stateDir: state,
              manifest: manifest as never,
              secrets: [randomBytes(24).toString('hex'), randomBytes(24).toString('hex')],
            }),
          );
          sizesOut.push(stored.sizeBytes);
        } finally {
          await container.unpause();
        }
        paused.push(performance.now() - t0);
      }
    } finally {
      await container.remove({ force: true });
    }
    console.log(
      `${mb} MB of state: paused median ${median(paused).toFixed(0)} ms (rounds: ${paused.map((p) => p.toFixed(0)).join(', ')}); archive ${(median(sizesOut) / MB).toFixed(1)} MB`,
    );
  }
} finally {
  await rm(root, { recursive: true, force: true });
}
