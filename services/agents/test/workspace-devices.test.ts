import t from 'tap';
import { randomBytes } from 'node:crypto';
import { createUserRow, identityHeaders, systemDb } from '@agentyard/testing';
import { build } from './helper.ts';

const app = await build(t);

async function user() {
  const row = await createUserRow();
  return { id: row.id, headers: identityHeaders({ userId: row.id, email: row.email }) };
}
async function device(userId: string, status: 'pending' | 'approved' | 'denied' | 'revoked', name = 'phone') {
  const id = `dev_${randomBytes(6).toString('hex')}`;
  await systemDb().insertInto('devices').values({ id, user_id: userId, name, ip: '10.0.0.7', status }).execute();
  return id;
}
const statusOf = async (id: string) =>
  (await systemDb().selectFrom('devices').select('status').where('id', '=', id).executeTakeFirstOrThrow()).status;
const act = (headers: Record<string, string>, payload: unknown) =>
  app.inject({
    method: 'POST',
    url: '/api/devices',
    headers: { ...headers, 'content-type': 'application/json' },
    payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
  });

// The devices are the pairing state of the user's running agents' gateways (the real gateway's
// pairing is tested in agent-work-skills-devices.test.ts); the table only records decisions taken.

t.test("the list comes from running agents' gateways, not from the table", async (t) => {
  const u = await user();
  await device(u.id, 'pending', 'tablet');
  await device(u.id, 'approved', 'laptop');
  const res = await app.inject({ method: 'GET', url: '/api/devices', headers: u.headers });
  t.equal(res.statusCode, 200);
  t.same(res.json(), { pending: [], approved: [] }, 'no running agent: no device, whatever the table holds');
  t.equal((await app.inject({ method: 'GET', url: '/api/devices', headers: identityHeaders() })).statusCode, 401);
});

t.test('400 for decisions already taken; nothing moves', async (t) => {
  const u = await user();
  const moves: ['denied' | 'revoked', string, string][] = [
    ['denied', 'approve', 'Device is not pending'],
    ['denied', 'deny', 'Device is not pending'],
    ['denied', 'revoke', 'Device is not approved'],
    ['revoked', 'approve', 'Device is not pending'],
    ['revoked', 'revoke', 'Device is not approved'],
  ];
  for (const [from, action, error] of moves) {
    const id = await device(u.id, from);
    const res = await act(u.headers, { deviceId: id, action });
    t.same([res.statusCode, res.json()], [400, { error }], `${from} + ${action}`);
    t.equal(await statusOf(id), from, `${from} + ${action} leaves ${from}`);
  }
});

t.test("404 for a missing or someone else's device; the interface's 400 messages", async (t) => {
  const u = await user();
  const other = await user();
  const theirs = await device(other.id, 'pending');
  t.same((await act(u.headers, { deviceId: theirs, action: 'approve' })).json(), { error: 'Device not found' });
  t.equal((await act(u.headers, { deviceId: 'dev_none', action: 'approve' })).statusCode, 404);
  t.equal(await statusOf(theirs), 'pending');
  const cases: [unknown, string][] = [
    [{}, 'Missing required fields: deviceId, action'],
    [{ deviceId: 'dev_x' }, 'Missing required fields: deviceId, action'],
    [{ deviceId: 'dev_x', action: 'delete' }, 'Invalid action. Must be: approve, deny, or revoke'],
    ['{"deviceId":', 'Invalid request body'],
    [{ deviceId: 'dev_x', action: 'approve', extra: 1 }, 'Invalid request body'],
  ];
  for (const [payload, error] of cases) {
    const res = await act(u.headers, payload);
    t.same([res.statusCode, res.json()], [400, { error }], JSON.stringify(payload));
  }
});
