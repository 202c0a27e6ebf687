import t from 'tap';
import {
  againstAnOpenTransaction,
  createUserRow,
  identityHeaders,
  malformedCursors,
  systemDb,
  walkPages,
  warmAppPool,
} from '@agentyard/testing';
import { createWorkflow } from '../src/domain/settings/workflows.ts';
import { build } from './helper.ts';

const app = await build(t, { WORKFLOWS_PER_USER_MAX: '4' });

async function user() {
  const row = await createUserRow();
  return { id: row.id, headers: identityHeaders({ userId: row.id, email: row.email }) };
}
const create = (headers: Record<string, string>, payload: object) =>
  app.inject({ method: 'POST', url: '/api/workflows', headers, payload });
const nodeCount = async (workflowId: string) =>
  (await systemDb().selectFrom('workflow_nodes').select('id').where('workflow_id', '=', workflowId).execute()).length;

t.test('create: 201, nodes in the given order with encoded config and position defaults', async (t) => {
  const u = await user();
  const res = await create(u.headers, {
    name: '  Daily digest ',
    description: 'news to telegram',
    nodes: [
      { type: 'trigger', config: '{"label":"every morning"}', position: '{"x":10,"y":20}' },
      { type: 'action', config: { label: 'summarise' } },
      { type: 'condition' },
      { type: 'output', position: { x: 3.5, y: -2 } },
    ],
  });
  t.equal(res.statusCode, 201);
  const { workflow } = res.json();
  t.match(workflow, {
    id: String,
    name: 'Daily digest',
    description: 'news to telegram',
    enabled: true,
    createdAt: String,
    updatedAt: String,
  });
  t.same(
    workflow.nodes.map((n: { type: string }) => n.type),
    ['trigger', 'action', 'condition', 'output'],
  );
  t.same(
    workflow.nodes.map((n: { config: string }) => JSON.parse(n.config)),
    [{ label: 'every morning' }, { label: 'summarise' }, {}, {}],
  );
  t.same(
    workflow.nodes.map((n: { position: string }) => JSON.parse(n.position)),
    [
      { x: 10, y: 20 },
      { x: 0, y: 0 },
      { x: 0, y: 0 },
      { x: 3.5, y: -2 },
    ],
  );
  t.equal(typeof workflow.nodes[0].config, 'string');
  const read = (await app.inject({ method: 'GET', url: `/api/workflows/${workflow.id}`, headers: u.headers })).json();
  t.same(
    read.workflow.nodes.map((n: { id: string }) => n.id),
    workflow.nodes.map((n: { id: string }) => n.id),
    'nodes by creation on read',
  );
  t.match(read.workflow.nodes[0], { createdAt: String });
});

t.test('list: newest update first, with nodes; 401 with an empty list without a session', async (t) => {
  const u = await user();
  const a = (await create(u.headers, { name: 'a', nodes: [{ type: 'trigger' }] })).json().workflow;
  const b = (await create(u.headers, { name: 'b' })).json().workflow;
  let list = (await app.inject({ method: 'GET', url: '/api/workflows', headers: u.headers })).json().workflows;
  t.same(
    list.map((w: { id: string }) => w.id),
    [b.id, a.id],
  );
  await app.inject({ method: 'PUT', url: `/api/workflows/${a.id}`, headers: u.headers, payload: { enabled: false } });
  list = (await app.inject({ method: 'GET', url: '/api/workflows', headers: u.headers })).json().workflows;
  t.same(
    list.map((w: { id: string }) => w.id),
    [a.id, b.id],
    'an update moves it to the front',
  );
  t.equal(list[0].nodes.length, 1);
  t.equal(list[0].enabled, false);
  const anonymous = await app.inject({ method: 'GET', url: '/api/workflows', headers: identityHeaders() });
  t.equal(anonymous.statusCode, 401);
  t.match(anonymous.json(), { workflows: [], error: String });
  const other = await user();
  t.same((await app.inject({ method: 'GET', url: '/api/workflows', headers: other.headers })).json(), {
    workflows: [],
    nextCursor: null,
  });
});

t.test('PUT with nodes replaces them all; without nodes keeps them; DELETE removes the nodes too', async (t) => {
  const u = await user();
  const w = (await create(u.headers, { name: 'w', nodes: [{ type: 'trigger' }, { type: 'action' }] })).json().workflow;
  const renamed = (
    await app.inject({
      method: 'PUT',
      url: `/api/workflows/${w.id}`,
      headers: u.headers,
      payload: { name: 'renamed', description: null },
    })
  ).json().workflow;
  t.has(renamed, { name: 'renamed', description: null });
  t.equal(renamed.nodes.length, 2);
  const replaced = (
    await app.inject({
      method: 'PUT',
      url: `/api/workflows/${w.id}`,
      headers: u.headers,
      payload: { nodes: [{ type: 'output', config: '{"label":"done"}' }] },
    })
  ).json().workflow;
  t.same(
    replaced.nodes.map((n: { type: string }) => n.type),
    ['output'],
  );
  t.equal(await nodeCount(w.id), 1);
  const bad = await app.inject({
    method: 'PUT',
    url: `/api/workflows/${w.id}`,
    headers: u.headers,
    payload: { nodes: [{ type: 'trigger' }, { type: 'action', config: 'not json' }] },
  });
  t.equal(bad.statusCode, 400);
  t.equal(await nodeCount(w.id), 1, 'a refused replacement keeps the old nodes');
  const del = await app.inject({ method: 'DELETE', url: `/api/workflows/${w.id}`, headers: u.headers });
  t.same(del.json(), { deleted: true });
  t.equal(await nodeCount(w.id), 0);
  t.equal((await app.inject({ method: 'GET', url: `/api/workflows/${w.id}`, headers: u.headers })).statusCode, 404);
});

t.test("someone else's workflow is not found; bad input is a 400 and changes nothing", async (t) => {
  const u = await user();
  const other = await user();
  const w = (await create(u.headers, { name: 'mine', nodes: [{ type: 'trigger' }] })).json().workflow;
  for (const method of ['GET', 'PUT', 'DELETE'] as const) {
    const res = await app.inject({
      method,
      url: `/api/workflows/${w.id}`,
      headers: other.headers,
      ...(method === 'PUT' ? { payload: { name: 'stolen' } } : {}),
    });
    t.same([res.statusCode, res.json()], [404, { error: 'Workflow not found' }], method);
  }
  const cases: object[] = [
    {},
    { name: '   ' },
    { name: 'x', nodes: [{ type: 'loop' }] },
    { name: 'x', nodes: [{}] },
    { name: 'x', nodes: [{ type: 'action', config: '[1,2]' }] },
    { name: 'x', nodes: [{ type: 'action', position: '{"x":"a","y":1}' }] },
    { name: 'x', enabled: false },
  ];
  for (const payload of cases) t.equal((await create(u.headers, payload)).statusCode, 400, JSON.stringify(payload));
  t.same((await create(u.headers, { name: ' ' })).json(), { error: 'Workflow name is required' });
  const rows = await systemDb().selectFrom('workflows').select('name').where('user_id', '=', u.id).execute();
  t.same(
    rows.map((r) => r.name),
    ['mine'],
  );
  t.equal((await app.inject({ method: 'GET', url: '/api/workflows/not-a-uuid', headers: u.headers })).statusCode, 400);
});

t.test('at the cap a new workflow is 429 and nothing is created', async (t) => {
  const u = await user();
  for (let i = 0; i < 4; i++) t.equal((await create(u.headers, { name: `w${i}` })).statusCode, 201);
  const res = await create(u.headers, { name: 'one too many', nodes: [{ type: 'trigger' }] });
  t.equal(res.statusCode, 429);
  t.same(res.json(), {
    error: 'Workflow limit reached: at most 4 per user; delete one first',
    code: 'WORKFLOW_LIMIT',
    limit: 4,
  });
  const rows = await systemDb().selectFrom('workflows').select('name').where('user_id', '=', u.id).execute();
  t.equal(rows.length, 4);
  t.notOk(rows.some((r) => r.name === 'one too many'));
  t.equal((await create((await user()).headers, { name: 'elsewhere' })).statusCode, 201, 'the cap is per user');
});

t.test('concurrent creations at cap - 1: exactly one is created', async (t) => {
  const u = await user();
  for (let i = 0; i < 3; i++) t.equal((await create(u.headers, { name: `w${i}` })).statusCode, 201);
  await warmAppPool();
  const results = await Promise.all(Array.from({ length: 6 }, (_, i) => create(u.headers, { name: `racer ${i}` })));
  t.same(results.map((r) => r.statusCode).sort(), [201, 429, 429, 429, 429, 429]);
  t.equal((await systemDb().selectFrom('workflows').select('id').where('user_id', '=', u.id).execute()).length, 4);
});

t.test('a creation while another is still uncommitted at cap - 1 waits for it, then is refused', async (t) => {
  const u = await user();
  for (let i = 0; i < 3; i++) t.equal((await create(u.headers, { name: `w${i}` })).statusCode, 201);
  const [first, second] = await againstAnOpenTransaction(
    u.id,
    (trx) => createWorkflow(trx, u.id, 4, { name: 'first' }),
    () => create(u.headers, { name: 'second' }),
  );
  t.equal(first.status, 'fulfilled');
  t.equal(second.status === 'fulfilled' && second.value.statusCode, 429);
  t.equal((await systemDb().selectFrom('workflows').select('id').where('user_id', '=', u.id).execute()).length, 4);
});

t.test(
  'pages walk every workflow, last updated first, none twice, none skipped, while workflows are added between pages',
  async (t) => {
    const paged = await build(t, { WORKFLOWS_PER_USER_MAX: '50' });
    const u = await user();
    const made: string[] = [];
    for (let i = 0; i < 5; i++)
      made.push(
        (
          await paged.inject({
            method: 'POST',
            url: '/api/workflows',
            headers: u.headers,
            payload: { name: `w${i}`, nodes: [{ type: 'trigger' }] },
          })
        ).json().workflow.id,
      );
    const added: string[] = [];
    const pages = await walkPages(
      async (cursor) => {
        const res = await paged.inject({
          method: 'GET',
          url: `/api/workflows?limit=2${cursor ? `&cursor=${cursor}` : ''}`,
          headers: u.headers,
        });
        t.equal(res.statusCode, 200);
        t.ok(
          res.json().workflows.every((w: { nodes: unknown[] }) => w.nodes.length === 1),
          'each with its nodes',
        );
        return { items: res.json().workflows.map((w: { id: string }) => w.id), nextCursor: res.json().nextCursor };
      },
      async () => {
        added.push(
          (
            await paged.inject({
              method: 'POST',
              url: '/api/workflows',
              headers: u.headers,
              payload: { name: 'between' },
            })
          ).json().workflow.id,
        );
      },
    );
    t.same(
      pages.map((p) => p.length),
      [2, 2, 1],
    );
    t.same(pages.flat(), [...made].reverse());
    const all = (await paged.inject({ method: 'GET', url: '/api/workflows?limit=100', headers: u.headers })).json();
    t.same(
      all.workflows.map((w: { id: string }) => w.id),
      [...added.reverse(), ...made.reverse()],
    );
    t.equal(all.nextCursor, null);
    for (const cursor of malformedCursors()) {
      const res = await paged.inject({
        method: 'GET',
        url: `/api/workflows?cursor=${encodeURIComponent(cursor)}`,
        headers: u.headers,
      });
      t.equal(res.statusCode, 400, cursor);
    }
    t.equal(
      (await paged.inject({ method: 'GET', url: '/api/workflows?limit=101', headers: u.headers })).statusCode,
      400,
    );
  },
);
