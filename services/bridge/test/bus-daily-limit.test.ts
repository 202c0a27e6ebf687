import t from 'tap';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { createUserRow, systemDb } from '@agentyard/testing';
import { busTypedData, type SignedBusFields } from '../src/domain/bus-signatures.ts';
import { agentOf, busMessage, registerOnBus, sendOnBus, startWebhookPeer, type User } from './support/bus-parties.ts';
import { build } from './helper.ts';

// Agent-to-agent messages per day by plan, counted per sending user; small limits via config.
const webhook = await startWebhookPeer(t);
const { app, config } = await build(t, {
  UNDERGROUND_RPC_URL: 'http://127.0.0.1:9',
  BUS_DAILY_MESSAGE_LIMITS: 'solo:3,collective:5,label:2000,network:10000',
  QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}-daily-limit`,
});
const recipientOwner = await createUserRow();
const recipient = await agentOf(recipientOwner.id);
await registerOnBus(
  t,
  app,
  recipientOwner,
  recipient,
  privateKeyToAccount(generatePrivateKey()).address,
  webhook.url('/r'),
);

async function senderOf(plan: string) {
  const user: User = await createUserRow({ plan });
  const agent = await agentOf(user.id);
  const key = privateKeyToAccount(generatePrivateKey());
  await registerOnBus(t, app, user, agent, key.address, webhook.url('/s'));
  return { user, agent, key };
}
const signed = async (key: PrivateKeyAccount, message: SignedBusFields) => ({
  ...message,
  signature: await key.signTypedData(busTypedData(message, config.UNDERGROUND_CHAIN_ID)),
});
const recordedFor = async (userId: string) =>
  (await systemDb().selectFrom('bus_messages').select('message_id').where('user_id', '=', userId).execute()).length;

t.test('free (counted as solo): 3 a day, then 429 with a clear message; nothing more recorded', async (t) => {
  const { user, agent, key } = await senderOf('free');
  for (let i = 0; i < 3; i++)
    t.equal(
      (await sendOnBus(app, await signed(key, busMessage(agent, recipient)))).statusCode,
      200,
      `message ${i + 1}`,
    );
  const refused = await sendOnBus(app, await signed(key, busMessage(agent, recipient)));
  t.equal(refused.statusCode, 429);
  t.same(refused.json(), {
    error: 'Daily agent-to-agent message limit reached: 3 per day on the solo plan',
    code: 'DAILY_MESSAGE_LIMIT',
  });
  t.equal(await recordedFor(user.id), 3);
  const other = await senderOf('solo');
  t.equal(
    (await sendOnBus(app, await signed(other.key, busMessage(other.agent, recipient)))).statusCode,
    200,
    'another user has a count of their own',
  );
});

t.test('concurrent sends never overshoot: collective, 12 at once, exactly 5 accepted', async (t) => {
  const { user, agent, key } = await senderOf('collective');
  const bodies = await Promise.all(Array.from({ length: 12 }, () => signed(key, busMessage(agent, recipient))));
  const statuses = (await Promise.all(bodies.map((body) => sendOnBus(app, body)))).map((r) => r.statusCode);
  t.same(statuses.filter((s) => s === 200).length, 5);
  t.same(statuses.filter((s) => s === 429).length, 7);
  t.equal(await recordedFor(user.id), 5);
});

t.test('refused messages do not use up the day: a replay and an unroutable action give their unit back', async (t) => {
  const { user, agent, key } = await senderOf('solo');
  const first = await signed(key, busMessage(agent, recipient));
  t.equal((await sendOnBus(app, first)).statusCode, 200);
  t.equal((await sendOnBus(app, first)).statusCode, 409, 'replayed');
  t.equal(
    (await sendOnBus(app, await signed(key, busMessage(agent, recipient, { action: 'AMPLIFY_POST' })))).statusCode,
    503,
    'no amplification service configured',
  );
  t.equal((await sendOnBus(app, await signed(key, busMessage(agent, recipient)))).statusCode, 200);
  t.equal(
    (await sendOnBus(app, await signed(key, busMessage(agent, recipient)))).statusCode,
    200,
    'the third accepted message',
  );
  t.equal((await sendOnBus(app, await signed(key, busMessage(agent, recipient)))).statusCode, 429);
  t.equal(await recordedFor(user.id), 3);
});

t.test('the quota follows the subscription: a cancelled collective subscription counts as solo', async (t) => {
  const { user, agent, key } = await senderOf('collective');
  await systemDb().updateTable('subscriptions').set({ status: 'canceled' }).where('user_id', '=', user.id).execute();
  for (let i = 0; i < 3; i++)
    t.equal(
      (await sendOnBus(app, await signed(key, busMessage(agent, recipient)))).statusCode,
      200,
      `message ${i + 1}`,
    );
  const refused = await sendOnBus(app, await signed(key, busMessage(agent, recipient)));
  t.equal(refused.statusCode, 429);
  t.match(refused.json(), { error: /3 per day on the solo plan/ });
});
