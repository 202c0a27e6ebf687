import t from 'tap';
import { lstat, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import {
  agentWorkspace,
  normaliseWorkspacePath,
  WorkspaceLimitError,
  WorkspaceMissingError,
  WorkspacePathError,
} from '@agentyard/runtime';

// The workspace files of an agent as the platform reaches them on the host: a real directory the
// agent also writes to (here written by the test as the agent would), with links it made.
const limits = { fileBytes: 1000, totalBytes: 1500 };
const body = (text: string | Buffer) => Readable.from([Buffer.from(text)]);

t.test('paths are normalised and kept inside the workspace', async (t) => {
  t.equal(normaliseWorkspacePath('uploads//a/./b.txt'), 'uploads/a/b.txt');
  t.equal(normaliseWorkspacePath('uploads/x/../y.txt'), 'uploads/y.txt');
  t.equal(normaliseWorkspacePath('.'), '');
  for (const bad of ['/etc/passwd', '..', '../state', 'a/../../b', 'a\\b', 'a\0b'])
    t.throws(() => normaliseWorkspacePath(bad), WorkspacePathError, bad);
});

t.test('files written, listed, read and removed; links leaving the workspace refused', async (t) => {
  const home = await mkdtemp(join(tmpdir(), 'agentyard-workspace-'));
  t.teardown(() => rm(home, { recursive: true, force: true }));
  const state = join(home, 'state');
  await mkdir(state);
  await writeFile(join(state, 'openclaw.json'), '{"secret":true}');
  const workspace = agentWorkspace(state);

  t.has(await workspace.write('uploads/a.txt', body('tea'), limits), {
    path: 'uploads/a.txt',
    size: 3,
    usedBytes: 3,
  });
  t.equal(await readFile(join(state, 'workspace/uploads/a.txt'), 'utf8'), 'tea');
  t.match(
    await workspace.write('uploads/a.txt', body('green tea'), limits),
    { size: 9, usedBytes: 9 },
    'a file replaced counts once',
  );
  t.has((await workspace.list('uploads')).entries, [{ name: 'a.txt', type: 'file', size: 9 }]);
  const read = await workspace.read('uploads/a.txt');
  const chunks: Buffer[] = [];
  for await (const chunk of read.stream) chunks.push(chunk as Buffer);
  t.equal(Buffer.concat(chunks).toString(), 'green tea');

  // What the agent made: a link to the state above the workspace, one to the host's /etc, one inside.
  await symlink(state, join(state, 'workspace/up'));
  await symlink('/etc', join(state, 'workspace/etc'));
  await symlink('uploads', join(state, 'workspace/inside'));
  await symlink('/home/node/.openclaw', join(state, 'workspace/container-state'));
  await t.rejects(
    workspace.read('container-state/openclaw.json'),
    WorkspacePathError,
    'a link to a path of the container is refused, not missing',
  );
  await t.rejects(workspace.read('up/openclaw.json'), WorkspacePathError);
  await t.rejects(workspace.read('etc/hostname'), WorkspacePathError);
  await t.rejects(workspace.list('etc'), WorkspacePathError);
  await t.rejects(workspace.write('etc/planted', body('x'), limits), WorkspacePathError);
  await t.rejects(workspace.write('up/openclaw.json', body('{}'), limits), WorkspacePathError);
  t.equal(await readFile(join(state, 'openclaw.json'), 'utf8'), '{"secret":true}', 'nothing outside was touched');
  t.equal((await workspace.read('inside/a.txt')).size, 9, 'a link that stays inside is followed');
  t.notOk(
    (await workspace.list('')).entries.some((e) => e.name === 'etc'),
    'links are not listed',
  );

  await t.rejects(workspace.read('uploads/none.txt'), WorkspaceMissingError);
  await t.rejects(workspace.read('uploads'), WorkspacePathError, 'a folder is not a file');
  await workspace.remove('etc');
  t.notOk(await lstat(join(state, 'workspace/etc')).catch(() => null), 'the link is gone');
  t.ok((await lstat('/etc')).isDirectory(), 'removing a link leaves its target');
  await workspace.remove('uploads/a.txt');
  await t.rejects(workspace.remove('uploads/a.txt'), WorkspaceMissingError);
});

t.test("the size of one file and the workspace's total are limits", async (t) => {
  const home = await mkdtemp(join(tmpdir(), 'agentyard-workspace-'));
  t.teardown(() => rm(home, { recursive: true, force: true }));
  const workspace = agentWorkspace(home);
  const tooLarge = await workspace.write('big.bin', body(Buffer.alloc(1001)), limits).catch((e) => e);
  t.ok(tooLarge instanceof WorkspaceLimitError && tooLarge.kind === 'file', 'one file over its limit');
  t.match(tooLarge.message, /1000 bytes/);
  await workspace.write('one.bin', body(Buffer.alloc(900)), limits);
  const full = await workspace.write('two.bin', body(Buffer.alloc(700)), limits).catch((e) => e);
  t.ok(full instanceof WorkspaceLimitError && full.kind === 'total', 'the workspace over its total');
  t.match(full.message, /900 of 1500 bytes/);
  t.same(
    (await workspace.list('')).entries.map((e) => e.name),
    ['one.bin'],
    'a refused upload leaves nothing behind',
  );
  t.equal(await workspace.usedBytes(), 900);
});
