import t from 'tap';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createUserRow, identityHeaders, systemDb } from '@agentyard/testing';
import { backend, startAgents, web } from '../agents-harness.ts';
import { build } from '../helper.ts';

// Why an agent failed: the web sees one of a fixed set of messages, never the container engine's
// own words or host paths; the backend surface and admins see the detail.

t.test(
  'a gateway that never becomes ready: the web is told so plainly, the detail is kept for the backend',
  async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'agentyard-last-error-'));
    t.teardown(() => rm(dir, { recursive: true, force: true }));
    // A "gateway" that runs but never listens: provisioning waits for /readyz in vain.
    const silent = join(dir, 'silent-gateway.mjs');
    await writeFile(silent, 'setInterval(() => {}, 60_000);\n');
    const h = await startAgents(t, {
      RUNTIME_DRIVER: 'process',
      RUNTIME_DATA_DIR: join(dir, 'data'),
      AGENT_IMAGE: silent,
      AGENT_READY_TIMEOUT_MS: '1000',
      AGENT_PORT_RANGE: '39000-39499',
    });
    const owner = await h.subscribedUser();
    const res = await h.app.inject({
      method: 'POST',
      url: '/api/agents/provision',
      headers: web(owner),
      payload: { name: 'Silent' },
    });
    t.equal(res.statusCode, 201, res.body);
    const id = res.json().agent.id as string;
    t.equal(await h.provisioned(id), 'error');
    const seen = await h.app.inject({ method: 'GET', url: `/api/agents/${id}`, headers: web(owner) });
    t.match(seen.json().agent, { status: /^error$/, lastError: 'Agent did not become ready in time' });
    t.notOk('lastErrorDetail' in seen.json().agent, 'no detail for the owner on the web');
    const detail = await h.app.inject({ method: 'GET', url: `/api/agents/${id}`, headers: backend(owner) });
    t.match(detail.json(), {
      status: /^error$/,
      lastError: 'Agent did not become ready in time',
      lastErrorDetail: /did not become ready/,
    });
  },
);

t.test(
  "a failure stored in the engine's own words (before the fixed set) reads as a failed start on the web",
  async (t) => {
    const app = await build(t, {});
    const owner = await createUserRow();
    const engine =
      'Provisioning failed: (HTTP code 500) server error - crun: open `/var/lib/containers/storage/overlay/3f2a/merged/etc/passwd`: Permission denied: OCI permission denied';
    const row = await systemDb()
      .insertInto('agents')
      .values({
        user_id: owner.id,
        name: 'legacy',
        model: 'openrouter/auto',
        tools_profile: 'messaging',
        subdomain: `legacy-${owner.id.slice(0, 8)}`,
        status: 'error',
        last_error: engine,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const seen = await app.inject({ method: 'GET', url: `/api/agents/${row.id}`, headers: web(owner) });
    t.equal(seen.statusCode, 200);
    t.equal(seen.json().agent.lastError, 'Container failed to start');
    t.notMatch(seen.body, /crun|\/var\/lib|HTTP code/, 'nothing of the engine reaches the web');
    const asAdmin = await app.inject({
      method: 'GET',
      url: `/api/agents/${row.id}`,
      headers: identityHeaders({ surface: 'web', auth: 'session', userId: owner.id, email: owner.email, admin: true }),
    });
    t.equal(asAdmin.json().agent.lastErrorDetail, engine, 'an admin sees the detail');
    t.equal(
      (await app.inject({ method: 'GET', url: `/api/agents/${row.id}`, headers: backend(owner) })).json()
        .lastErrorDetail,
      engine,
    );
  },
);
