import t from 'tap';
import { createUserRow, identityHeaders, subscribeUser, systemDb } from '@agentyard/testing';
import { build } from './helper.ts';

// The settings' plan is the one currentPlan answers: the active subscription's, network for admins,
// `free` without one (the users.plan column nothing wrote is gone).
const app = await build(t);
const settings = async (user: { id: string; email: string }, admin = false) =>
  (
    await app.inject({
      method: 'GET',
      url: '/api/settings',
      headers: identityHeaders({ surface: 'web', auth: 'session', userId: user.id, email: user.email, admin }),
    })
  ).json();

t.test('no subscription: free; a subscription: its plan; cancelled: free again; admins: network', async (t) => {
  const user = await createUserRow();
  t.equal((await settings(user)).plan, 'free');
  const subscription = await subscribeUser(user.id, 'collective');
  t.equal((await settings(user)).plan, 'collective');
  const renamed = await app.inject({
    method: 'PATCH',
    url: '/api/settings',
    payload: { name: 'Renamed' },
    headers: identityHeaders({ surface: 'web', auth: 'session', userId: user.id, email: user.email }),
  });
  t.has(renamed.json(), { name: 'Renamed', plan: 'collective' });
  await systemDb().updateTable('subscriptions').set({ status: 'canceled' }).where('id', '=', subscription).execute();
  t.equal((await settings(user)).plan, 'free');
  t.equal((await settings(user, true)).plan, 'network');
});
