import t from 'tap';
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { createGunzip, gzipSync } from 'node:zlib';
import { pack } from 'tar-stream';
import {
  packAgentState,
  secretScrubber,
  SNAPSHOT_FORMAT,
  SnapshotArchiveError,
  type SnapshotManifest,
  SnapshotTooLargeError,
  unpackAgentState,
  verifyAgentArchive,
} from '@agentyard/runtime';

// A snapshot archive made from a real state directory (written here as an agent would) and
// unpacked again; hostile archives built entry by entry with tar-stream.
const manifest: SnapshotManifest = {
  format: SNAPSHOT_FORMAT,
  agentId: '00000000-0000-4000-8000-000000000001',
  openclawVersion: '2026.9.6',
  createdAt: new Date().toISOString(),
  reason: 'manual',
  label: null,
  config: { logLevel: 'info' },
  skills: ['weather'],
  channels: ['telegram'],
};
const bufferOf = async (stream: Readable) => {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
};

async function tarGz(
  entries: {
    name: string;
    body?: string;
    type?: 'file' | 'directory' | 'symlink' | 'character-device' | 'fifo';
    linkname?: string;
  }[],
) {
  const archive = pack();
  for (const e of entries) {
    const header = { name: e.name, type: e.type ?? 'file', linkname: e.linkname, mode: 0o600 };
    if (header.type === 'file') archive.entry(header, e.body ?? '');
    else archive.entry(header);
  }
  archive.finalize();
  return gzipSync(await bufferOf(archive as unknown as Readable));
}
const sha = (s: string) => createHash('sha256').update(s).digest('hex');
const wellFormed = (files: Record<string, string>) => [
  { name: 'manifest.json', body: JSON.stringify(manifest) },
  ...Object.entries(files).map(([name, body]) => ({ name: `state/${name}`, body })),
  {
    name: 'checksums.json',
    body: JSON.stringify({ files: Object.fromEntries(Object.entries(files).map(([n, b]) => [n, sha(b)])) }),
  },
];

t.test('the scrubber replaces secrets split across chunks, keeping the length', async (t) => {
  const secret = 'tok_abcdefghijklmnop';
  const input = `a${secret}b${secret}`;
  const chunks = [input.slice(0, 7), input.slice(7, 25), input.slice(25)].map((s) => Buffer.from(s));
  const out = (await bufferOf(Readable.from(chunks).pipe(secretScrubber([secret, 'short'])))).toString();
  t.equal(out.length, input.length);
  t.notOk(out.includes(secret));
  t.equal(out, `a${'*'.repeat(secret.length)}b${'*'.repeat(secret.length)}`);
});

t.test('a state directory packs without secrets or left-out parts and unpacks the same', async (t) => {
  const root = await mkdtemp(join(tmpdir(), 'agentyard-snapshot-'));
  t.teardown(() => rm(root, { recursive: true, force: true }));
  const state = join(root, 'state');
  const gatewayToken = randomBytes(24).toString('hex');
  const aiKey = `ag_${randomBytes(24).toString('hex')}`;
  const telegram = `123456:${randomBytes(20).toString('hex')}`;
  await mkdir(join(state, 'workspace/memory'), { recursive: true });
  await mkdir(join(state, 'identity'));
  await mkdir(join(state, 'credentials'));
  await writeFile(
    join(state, 'openclaw.json'),
    JSON.stringify({ gateway: { auth: { token: gatewayToken } }, models: { apiKey: aiKey } }),
  );
  await writeFile(join(state, 'identity/device.json'), '{"privateKey":"PRIVATE"}');
  await writeFile(join(state, 'credentials/telegram.json'), JSON.stringify({ token: telegram }));
  await writeFile(
    join(state, 'workspace/MEMORY.md'),
    `remember the blue door; the agent once echoed ${gatewayToken} and ${telegram}`,
  );
  const otherAiKey = `ag_${randomBytes(32).toString('base64url')}`;
  await writeFile(join(state, 'workspace/notes.txt'), `an AI key of an earlier container: ${otherAiKey}`);
  const big = randomBytes(300_000);
  await writeFile(join(state, 'workspace/memory/blob.bin'), big);
  await symlink('/etc/passwd', join(state, 'workspace/escape'));
  // OpenClaw's state database with the running gateway's owner lease, as a paused copy holds it.
  await mkdir(join(state, 'state'));
  const { DatabaseSync } = await import('node:sqlite');
  const sqlite = new DatabaseSync(join(state, 'state/openclaw.sqlite'));
  sqlite.exec(
    "create table state_leases (scope text, owner text, expires_at integer); insert into state_leases values ('gateway', 'old-container', 9999999999999); create table notes (text text); insert into notes values ('kept')",
  );
  sqlite.close();

  const archive = await bufferOf(
    packAgentState({ stateDir: state, manifest, secrets: [gatewayToken, aiKey, telegram] }),
  );
  const plain = (await bufferOf(Readable.from([archive]).pipe(createGunzip()))).toString('latin1');
  for (const secret of [gatewayToken, aiKey, telegram, otherAiKey, 'PRIVATE'])
    t.notOk(plain.includes(secret), 'no secret in the archive');

  const listing = execFileSync('tar', ['-tzf', '-'], { input: archive }).toString().split('\n').filter(Boolean);
  t.same(listing.slice(0, 1), ['manifest.json']);
  t.equal(listing.at(-1), 'checksums.json');
  t.notOk(
    listing.some((n) => /openclaw\.json|identity|credentials|escape/.test(n)),
    'left-out parts and links are not archived',
  );

  const target = join(root, 'restored');
  const read = await unpackAgentState(Readable.from([archive]), target, { maxBytes: 10_000_000 });
  t.same(read, manifest);
  t.match(
    await readFile(join(target, 'workspace/MEMORY.md'), 'utf8'),
    /^remember the blue door; the agent once echoed \*+ and \*+$/,
  );
  t.same(await readFile(join(target, 'workspace/memory/blob.bin')), big);
  t.same((await readdir(target)).sort(), ['state', 'workspace']);
  const restoredDb = new DatabaseSync(join(target, 'state/openclaw.sqlite'));
  t.same(
    restoredDb.prepare('select count(*) as n from state_leases').get(),
    { n: 0 },
    "the old gateway's leases are gone",
  );
  t.same(restoredDb.prepare('select text from notes').get(), { text: 'kept' }, 'the rest of the database is kept');
  restoredDb.close();

  await t.rejects(
    unpackAgentState(Readable.from([archive]), join(root, 'small'), { maxBytes: 1000 }),
    SnapshotTooLargeError,
  );
});

t.test('hostile or malformed archives are refused', async (t) => {
  const root = await mkdtemp(join(tmpdir(), 'agentyard-snapshot-'));
  t.teardown(() => rm(root, { recursive: true, force: true }));
  const m = { name: 'manifest.json', body: JSON.stringify(manifest) };
  const cases: [string, Buffer][] = [
    ['not gzip', Buffer.from('hello')],
    ['gzip, not tar', gzipSync(Buffer.from('x'.repeat(2000)))],
    ['no manifest first', await tarGz([{ name: 'state/a', body: 'a' }, m])],
    ['manifest of another format', await tarGz([{ name: 'manifest.json', body: '{"format":"zip"}' }])],
    ['absolute path', await tarGz([m, { name: '/etc/cron.d/x', body: 'a' }])],
    ['climbing path', await tarGz([m, { name: 'state/../../x', body: 'a' }])],
    ['symlink', await tarGz([m, { name: 'state/l', type: 'symlink', linkname: '/etc/passwd' }])],
    ['device', await tarGz([m, { name: 'state/d', type: 'character-device' }])],
    ['fifo', await tarGz([m, { name: 'state/f', type: 'fifo' }])],
    ['left-out config', await tarGz([m, { name: 'state/openclaw.json', body: '{}' }])],
    ['no checksums', await tarGz([m, { name: 'state/a', body: 'a' }])],
    [
      'wrong checksum',
      await tarGz([
        ...wellFormed({ a: 'a' }).slice(0, 2),
        { name: 'checksums.json', body: JSON.stringify({ files: { a: sha('b') } }) },
      ]),
    ],
    [
      'file not in checksums',
      await tarGz([
        ...wellFormed({ a: 'a' }).slice(0, 2),
        { name: 'state/b', body: 'b' },
        { name: 'checksums.json', body: JSON.stringify({ files: { a: sha('a') } }) },
      ]),
    ],
  ];
  for (const [label, archive] of cases) {
    await t.rejects(
      verifyAgentArchive(Readable.from([archive]), { maxBytes: 1_000_000 }),
      SnapshotArchiveError,
      `${label} (verified only)`,
    );
    await t.rejects(
      unpackAgentState(Readable.from([archive]), join(root, label.replaceAll(' ', '-')), { maxBytes: 1_000_000 }),
      SnapshotArchiveError,
      label,
    );
  }
  t.same(await readdir(join(root, 'climbing-path')), [], 'nothing written outside');
  t.equal(
    (
      await verifyAgentArchive(Readable.from([await tarGz(wellFormed({ 'workspace/a.md': 'a' }))]), {
        maxBytes: 1_000_000,
      })
    ).agentId,
    manifest.agentId,
  );
  const ok = await unpackAgentState(
    Readable.from([await tarGz(wellFormed({ 'workspace/a.md': 'a' }))]),
    join(root, 'ok'),
    { maxBytes: 1_000_000 },
  );
  t.equal(ok.agentId, manifest.agentId);
  t.equal(await text(Readable.from([await readFile(join(root, 'ok/workspace/a.md'))])), 'a');
});
