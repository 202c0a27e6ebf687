import t from 'tap';
import { currentPlan, currentPlans, withUser } from '@agentyard/db';
import { appDb, createUserRow, subscribeUser, systemDb } from '@agentyard/testing';

// The one answer to "what plan does this user have now": the active subscription's plan, admins
// network, else none.
const at = (seconds: number) => new Date(Date.now() + seconds * 1000);

t.test('no subscription: no plan; an admin: network whatever they hold', async (t) => {
  const user = await createUserRow();
  t.equal(await currentPlan(systemDb(), user.id, { admin: false }), null);
  t.equal(await currentPlan(systemDb(), user.id, { admin: true }), 'network');
  await subscribeUser(user.id, 'solo');
  t.equal(await currentPlan(systemDb(), user.id, { admin: true }), 'network');
});

t.test('active and trialing count by default; past_due, canceled and unknown plans do not', async (t) => {
  for (const [status, plan] of [
    ['active', 'solo'],
    ['trialing', 'solo'],
    ['past_due', null],
    ['canceled', null],
    ['incomplete', null],
  ] as const) {
    const user = await createUserRow();
    await subscribeUser(user.id, 'solo', status);
    t.equal(await currentPlan(systemDb(), user.id, { admin: false }), plan, status);
  }
  const odd = await createUserRow();
  await subscribeUser(odd.id, 'enterprise');
  t.equal(
    await currentPlan(systemDb(), odd.id, { admin: false }),
    null,
    'a subscription naming no plan of ours gives none',
  );
});

t.test('SUBSCRIPTION_ACTIVE_STATUSES decides; the newest active subscription wins; cancelling drops it', async (t) => {
  const user = await createUserRow();
  const older = await subscribeUser(user.id, 'solo', 'past_due');
  t.equal(await currentPlan(systemDb(), user.id, { admin: false, activeStatuses: ['active', 'past_due'] }), 'solo');
  const newer = await subscribeUser(user.id, 'collective');
  await systemDb()
    .updateTable('subscriptions')
    .set({ updated_at: at(5) })
    .where('id', '=', newer)
    .execute();
  t.equal(
    await currentPlan(systemDb(), user.id, { admin: false, activeStatuses: ['active', 'past_due'] }),
    'collective',
  );
  t.same(
    await currentPlans(systemDb(), [user.id], { activeStatuses: ['active', 'past_due'] }),
    new Map([[user.id, 'collective']]),
  );
  await systemDb().updateTable('subscriptions').set({ status: 'canceled' }).where('id', 'in', [older, newer]).execute();
  t.equal(await currentPlan(systemDb(), user.id, { admin: false }), null);
});

t.test("on the user's own transaction it sees only their subscriptions", async (t) => {
  const user = await createUserRow({ plan: 'label' });
  const other = await createUserRow();
  t.equal(await withUser(appDb(), user.id, (trx) => currentPlan(trx, user.id, { admin: false })), 'label');
  t.equal(
    await withUser(appDb(), other.id, (trx) => currentPlan(trx, user.id, { admin: false })),
    null,
    'another user cannot read it',
  );
});
