import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdir, mkdtemp, readdir, rm, truncate, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sealAgentSecret } from '@agentyard/agent-gateway';
import { parseKeyring } from '@agentyard/crypto';
import { createUserRow, systemDb } from '@agentyard/testing';
import t, { type Test } from 'tap';
import { WebSocketServer } from 'ws';
import { loadAgentsConfig } from '../src/config.ts';
import { web } from './agents-harness.ts';
import { build } from './helper.ts';

// Regression (issue 27, N17): the skill and workspace limits were checked on a snapshot taken
// before the write, so requests sent together all passed the check and together passed the limit.
// Each check and its write are now one step per agent (a lock in Redis; uploads reserve their bytes).
const CONCURRENT = 6;
const ALLOWED = 3;

async function agentWithWorkspace(t: Test, plan: string) {
  const dataDir = await mkdtemp(join(tmpdir(), 'agentyard-concurrent-limits-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const instance = `limits-${randomBytes(3).toString('hex')}`;
  const env = {
    RUNTIME_DRIVER: 'process',
    RUNTIME_DATA_DIR: dataDir,
    RUNTIME_INSTANCE: instance,
    QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}-${instance}`,
  };
  const app = await build(t, env);
  const owner = await createUserRow({ plan });
  const provisioned = await app.inject({
    method: 'POST',
    url: '/api/agents/provision',
    headers: web(owner),
    payload: { name: 'limits' },
  });
  t.equal(provisioned.statusCode, 201, provisioned.body);
  const agentId = provisioned.json().agent.id as string;
  const workspace = join(dataDir, instance, agentId, 'home', '.openclaw', 'workspace');
  await mkdir(workspace, { recursive: true });
  return { app, owner, agentId, workspace, env };
}

t.test('uploads sent together stay within the workspace total: exactly the room there is', async (t) => {
  const { app, owner, agentId, workspace } = await agentWithWorkspace(t, 'solo');
  const upload = (path: string, payload: Buffer) =>
    app.inject({
      method: 'POST',
      url: `/api/files?agentId=${agentId}&path=${path}`,
      headers: { ...web(owner), 'content-type': 'application/octet-stream' },
      payload,
    });
  const first = await upload('uploads/first.bin', Buffer.from('1'));
  t.equal(first.statusCode, 201, first.body);
  const total = first.json().limitBytes as number;
  // The workspace filled (a sparse file: its size counts, no disk is used) to leave room for exactly ALLOWED files.
  const size = 256 * 1024;
  await writeFile(join(workspace, 'filler.bin'), '');
  await truncate(join(workspace, 'filler.bin'), total - 1 - ALLOWED * size);

  const answers = await Promise.all(
    Array.from({ length: CONCURRENT }, (_, i) => upload(`uploads/f${i}.bin`, Buffer.alloc(size, i))),
  );
  const statuses = answers.map((a) => a.statusCode).sort();
  t.same(
    statuses,
    [...Array(ALLOWED).fill(201), ...Array(CONCURRENT - ALLOWED).fill(429)],
    'exactly the uploads that fit',
  );
  for (const refused of answers.filter((a) => a.statusCode === 429))
    t.has(refused.json(), { code: 'WORKSPACE_FULL', limit: total });
  const written = (await readdir(join(workspace, 'uploads'))).filter((name) => /^f\d\.bin$/.test(name));
  t.equal(written.length, ALLOWED, 'no refused upload left a file');
  const used = await app.inject({
    method: 'POST',
    url: `/api/files?agentId=${agentId}&path=uploads/empty.bin`,
    headers: { ...web(owner), 'content-type': 'application/octet-stream' },
    payload: Buffer.alloc(0),
  });
  t.equal(used.json().usedBytes, total, 'the workspace holds its total, not more');
});

t.test('skill installs sent together stop at the plan limit', async (t) => {
  const { app, owner, agentId, workspace, env } = await agentWithWorkspace(t, 'solo');
  // A gateway speaking the control plane: its skills are the SKILL.md files on the agent's disk, as OpenClaw's are.
  const server = createServer((_req, res) => res.writeHead(404).end());
  const frames = new WebSocketServer({ server });
  const workspaceDir = '/home/node/.openclaw/workspace';
  frames.on('connection', (socket) => {
    socket.send(
      JSON.stringify({ type: 'event', event: 'connect.challenge', payload: { nonce: 'nonce', ts: Date.now() } }),
    );
    socket.on('message', async (data) => {
      const frame = JSON.parse(String(data)) as { id: string; method: string };
      const answer = (payload: unknown) =>
        socket.send(JSON.stringify({ type: 'res', id: frame.id, ok: true, payload }));
      if (frame.method === 'connect') return answer({ auth: { scopes: ['operator.admin'] } });
      if (frame.method === 'config.get') return answer({ config: {} });
      if (frame.method === 'skills.update') return answer({ ok: true });
      if (frame.method === 'skills.status') {
        const names = await readdir(join(workspace, 'skills')).catch(() => [] as string[]);
        return answer({
          workspaceDir,
          skills: names.map((name) => ({
            name,
            description: 'd',
            source: 'workspace',
            bundled: false,
            filePath: `${workspaceDir}/skills/${name}/SKILL.md`,
          })),
        });
      }
      socket.send(
        JSON.stringify({ type: 'res', id: frame.id, ok: false, error: { code: 'UNKNOWN', message: frame.method } }),
      );
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => {
    frames.close();
    server.closeAllConnections();
    server.close();
  });
  const keyring = parseKeyring(loadAgentsConfig({ ...process.env, ...env }).ENCRYPTION_KEYS);
  await systemDb()
    .updateTable('agents')
    .set({
      status: 'running',
      gateway_url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      gateway_token_sealed: sealAgentSecret(keyring, agentId, 'gateway-token', 'gateway-token'),
    })
    .where('id', '=', agentId)
    .execute();

  const install = (name: string) =>
    app.inject({
      method: 'POST',
      url: '/api/skills',
      headers: web(owner),
      payload: { agentId, name, skillMd: `---\nname: ${name}\ndescription: skill ${name}\n---\nDo ${name}.\n` },
    });
  const answers = await Promise.all(Array.from({ length: CONCURRENT }, (_, i) => install(`skill-${i}`)));
  t.same(
    answers.map((a) => a.statusCode).sort(),
    [...Array(ALLOWED).fill(200), ...Array(CONCURRENT - ALLOWED).fill(429)],
    'exactly the plan limit (solo: 3) installed',
  );
  for (const refused of answers.filter((a) => a.statusCode === 429))
    t.same(refused.json(), { error: `Skill limit reached for your plan (${ALLOWED})`, code: 'SKILL_LIMIT' });
  t.equal((await readdir(join(workspace, 'skills'))).length, ALLOWED, 'no refused install left its files');
});
