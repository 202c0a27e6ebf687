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
const statusOf = async (id: string) => (await systemDb().selectFrom('devices').select('status').where('id', '=', id).executeTakeFirstOrThrow()).status;
const act = (headers: Record<string, string>, payload: unknown) =>
  app.inject({ method: 'POST', url: '/api/devices', headers: { ...headers, 'content-type': 'application/json' }, payload: typeof payload === 'string' ? payload : JSON.stringify(payload) });

t.test('the list holds the user\'s pending and approved devices only', async (t) => {
  const u = await user();
  const other = await user();
  const p = await device(u.id, 'pending', 'tablet');
  const a = await device(u.id, 'approved', 'laptop');
  await device(u.id, 'denied');
  await device(other.id, 'pending');
  const res = await app.inject({ method: 'GET', url: '/api/devices', headers: u.headers });
  t.equal(res.statusCode, 200);
  const body = res.json();
  t.same(body.pending.map((d: { id: string }) => d.id), [p]);
  t.same(body.approved.map((d: { id: string }) => d.id), [a]);
  t.match(body.pending[0], { id: p, name: 'tablet', ip: '10.0.0.7', status: 'pending', firstSeen: String, lastSeen: String });
  t.equal((await app.inject({ method: 'GET', url: '/api/devices', headers: identityHeaders() })).statusCode, 401);
});

t.test('the state machine of spec §3', async (t) => {
  const u = await user();
  const moves: ['pending' | 'approved' | 'denied' | 'revoked', string, number, string | null, string][] = [
    ['pending', 'approve', 200, null, 'approved'],
    ['pending', 'deny', 200, null, 'denied'],
    ['approved', 'revoke', 200, null, 'revoked'],
    ['approved', 'approve', 400, 'Device is not pending', 'approved'],
    ['approved', 'deny', 400, 'Device is not pending', 'approved'],
    ['pending', 'revoke', 400, 'Device is not approved', 'pending'],
    ['denied', 'approve', 400, 'Device is not pending', 'denied'],
    ['denied', 'revoke', 400, 'Device is not approved', 'denied'],
    ['revoked', 'approve', 400, 'Device is not pending', 'revoked'],
    ['revoked', 'revoke', 400, 'Device is not approved', 'revoked'],
  ];
  for (const [from, action, status, error, to] of moves) {
    const id = await device(u.id, from);
    const res = await act(u.headers, { deviceId: id, action });
    t.equal(res.statusCode, status, `${from} + ${action}`);
    if (error) t.same(res.json(), { error });
    else t.match(res.json(), { success: true, pending: Array, approved: Array });
    t.equal(await statusOf(id), to, `${from} + ${action} leaves ${to}`);
  }
  const approved = await device(u.id, 'pending');
  const res = await act(u.headers, { deviceId: approved, action: 'approve' });
  t.ok(res.json().approved.some((d: { id: string }) => d.id === approved), 'the answer carries the new lists');
});

t.test('404 for a missing or someone else\'s device; the spec\'s 400 messages', async (t) => {
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
