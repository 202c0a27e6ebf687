import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createUserRow } from '@agentyard/testing';
import t from 'tap';
import { web } from './agents-harness.ts';
import { build } from './helper.ts';

// Regressions (issue 27, N3 and N16): the agent writes its workspace, so what a download opens is
// the agent's choice. A FIFO there parked the service's threadpool (an open waits for a writer),
// and a `.js` it wrote was served as JavaScript on the console's origin. The workspace is a real
// directory: the process driver's agent home, which the file routes read.
t.setTimeout(60_000);

t.test(
  "a FIFO in an agent's workspace is refused, and never blocks the service; files download as opaque attachments",
  async (t) => {
    const dataDir = await mkdtemp(join(tmpdir(), 'agentyard-hostile-files-'));
    t.teardown(() => rm(dataDir, { recursive: true, force: true }));
    const instance = `hostile-${randomBytes(3).toString('hex')}`;
    const app = await build(t, {
      RUNTIME_DRIVER: 'process',
      RUNTIME_DATA_DIR: dataDir,
      RUNTIME_INSTANCE: instance,
      QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}-${instance}`,
    });
    const owner = await createUserRow({ plan: 'label' });
    const provisioned = await app.inject({
      method: 'POST',
      url: '/api/agents/provision',
      headers: web(owner),
      payload: { name: 'hostile files' },
    });
    t.equal(provisioned.statusCode, 201, provisioned.body);
    const agentId = provisioned.json().agent.id as string;

    // What the agent's own tools would leave in its workspace.
    const workspace = join(dataDir, instance, agentId, 'home', '.openclaw', 'workspace');
    await mkdir(workspace, { recursive: true });
    execFileSync('mkfifo', [join(workspace, 'pipe')]);
    const script = "fetch('/api/user/api-keys', { method: 'POST' });\n";
    await writeFile(join(workspace, 'steal.js'), script);
    const download = (path: string) =>
      app.inject({
        method: 'GET',
        url: `/api/files?agentId=${agentId}&path=${encodeURIComponent(path)}&download=1`,
        headers: web(owner),
      });

    // More downloads than the threadpool has threads (4): each must answer, none may hold a thread.
    const refused = await Promise.all(Array.from({ length: 8 }, () => download('pipe')));
    for (const res of refused) {
      t.equal(res.statusCode, 400, res.body);
      t.match(res.json(), { error: /Not a regular file: pipe/ });
    }

    const js = await download('steal.js');
    t.equal(js.statusCode, 200, 'the service still reads files after them');
    t.equal(js.body, script);
    t.equal(js.headers['content-type'], 'application/octet-stream', 'never served as JavaScript');
    t.match(js.headers['content-disposition'], /^attachment; filename="steal.js"/);
    t.equal(js.headers['x-content-type-options'], 'nosniff');

    const listed = await app.inject({
      method: 'GET',
      url: `/api/files?agentId=${agentId}&path=.`,
      headers: web(owner),
    });
    t.equal(listed.statusCode, 200, listed.body);
    t.same(
      listed.json().entries.map((e: { name: string }) => e.name),
      ['steal.js'],
      'the FIFO is not listed',
    );

    const upload = await app.inject({
      method: 'POST',
      url: `/api/files?agentId=${agentId}&path=uploads/a.txt`,
      headers: { ...web(owner), 'content-type': 'text/plain' },
      payload: 'hello',
    });
    t.equal(upload.statusCode, 201, 'the size accounting walks past the FIFO without opening it');
    t.equal(upload.json().usedBytes, Buffer.byteLength(script) + 5);
  },
);
