import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { agentWorkspace, WORKSPACE_WALK_LIMITS } from '@agentyard/runtime';
import t, { type Test } from 'tap';

// Regression (issue 27, N3): the agent shapes its workspace's tree, and listing or measuring it
// walked all of it. A listing stops at its cap (entries skipped count too), and a tree too wide or
// too deep to measure refuses the write instead of holding the service.
const limits = { fileBytes: 1000, totalBytes: 1_000_000 };

async function stateWith(t: Test) {
  const home = await mkdtemp(join(tmpdir(), 'agentyard-walk-'));
  t.teardown(() => rm(home, { recursive: true, force: true }));
  const workspace = join(home, 'state', 'workspace');
  await mkdir(workspace, { recursive: true });
  return { state: join(home, 'state'), workspace };
}

t.test('a listing stops at its cap and says so', async (t) => {
  const { state, workspace } = await stateWith(t);
  await mkdir(join(workspace, 'many'));
  const count = WORKSPACE_WALK_LIMITS.listedEntries + 5;
  for (let i = 0; i < count; i += 500)
    await Promise.all(
      Array.from({ length: Math.min(500, count - i) }, (_, j) => writeFile(join(workspace, 'many', `f${i + j}`), '')),
    );
  const listed = await agentWorkspace(state).list('many');
  t.equal(listed.entries.length, WORKSPACE_WALK_LIMITS.listedEntries);
  t.equal(listed.truncated, true);
  await mkdir(join(workspace, 'few'));
  execFileSync('mkfifo', [join(workspace, 'few', 'pipe')]);
  await writeFile(join(workspace, 'few', 'a'), 'a');
  const few = await agentWorkspace(state).list('few');
  t.same(
    few.entries.map((e) => e.name),
    ['a'],
    'a FIFO is not listed',
  );
  t.equal(few.truncated, undefined, 'nothing cut');
});

t.test('a tree too deep to measure refuses the write, within the walk', async (t) => {
  const { state, workspace } = await stateWith(t);
  await mkdir(join(workspace, ...Array.from({ length: WORKSPACE_WALK_LIMITS.depth + 2 }, () => 'd')), {
    recursive: true,
  });
  await t.rejects(agentWorkspace(state).write('a.txt', Readable.from([Buffer.from('a')]), limits), {
    name: /^WorkspaceLimitError$/,
    message: /too large to measure/,
  });
  await rm(join(workspace, 'd'), { recursive: true });
  t.match(
    await agentWorkspace(state).write('a.txt', Readable.from([Buffer.from('a')]), limits),
    { size: 1 },
    'a shallow tree is measured',
  );
});
