import t from 'tap';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { createUserRow, identityHeaders, startChain, systemDb } from '@agentyard/testing';
import { deliveryJobId } from '../src/domain/privileged/bus.ts';
import { busTypedData } from '../src/domain/bus-signatures.ts';
import { startWorkers } from '../src/app.ts';
import { build } from './helper.ts';

t.setTimeout(180_000);
const chain = await startChain();
t.teardown(() => chain.stop());

// The recipient agent's webhook and the negotiation service, as local servers.
const delivered: Record<string, unknown>[] = [];
const deliveredWaiters: ((body: Record<string, unknown>) => void)[] = [];
const webhook = createServer(async (req, res) => {
  let raw = '';
  for await (const chunk of req) raw += chunk;
  const body = JSON.parse(raw);
  delivered.push(body);
  deliveredWaiters.shift()?.(body);
  res.end('{}');
});
const negotiation = createServer(async (req, res) => {
  let raw = '';
  for await (const chunk of req) raw += chunk;
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify({ negotiated: true, action: JSON.parse(raw).action }));
});
for (const s of [webhook, negotiation]) await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
t.teardown(() => {
  webhook.close();
  negotiation.close();
});
const port = (s: typeof webhook) => (s.address() as AddressInfo).port;

const { app, config } = await build(t, {
  UNDERGROUND_RPC_URL: chain.rpcUrl,
  UNDERGROUND_CHAIN_ID: String(chain.chainId),
  NEGOTIATION_SERVICE_URL: `http://127.0.0.1:${port(negotiation)}/negotiate`,
  BUS_DELIVERY_ALLOWED_ADDRESSES: '127.0.0.1',
  // Queues of this file's own, so another file's delivery worker never takes its messages.
  QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}-bus`,
});
const workers = await startWorkers(config, { systemDb: systemDb() });
t.teardown(() => workers.close());

async function agentOf(userId: string) {
  return (
    await systemDb()
      .insertInto('agents')
      .values({
        user_id: userId,
        name: 'a',
        model: 'm',
        tools_profile: 'messaging',
        subdomain: `bus-${crypto.randomUUID().slice(0, 8)}`,
      })
      .returning('id')
      .executeTakeFirstOrThrow()
  ).id;
}
const alice = await createUserRow();
const bob = await createUserRow();
const [sender, recipient, unsafeRecipient] = [await agentOf(alice.id), await agentOf(bob.id), await agentOf(bob.id)];
const senderKey = privateKeyToAccount(generatePrivateKey());
const as = (u: { id: string; email: string }) =>
  identityHeaders({ surface: 'backend', auth: 'service', userId: u.id, email: u.email });
const register = (u: typeof alice, agentId: string, walletAddress: string, webhookUrl: string) =>
  app.inject({
    method: 'PUT',
    url: `/api/underground/agents/${agentId}/bus`,
    headers: as(u),
    payload: { walletAddress, webhookUrl },
  });

t.test("bus endpoints: registered by the agent's owner only", async (t) => {
  t.equal((await register(alice, sender, senderKey.address, `http://127.0.0.1:${port(webhook)}/a`)).statusCode, 200);
  t.equal(
    (
      await register(
        bob,
        recipient,
        privateKeyToAccount(generatePrivateKey()).address,
        `http://127.0.0.1:${port(webhook)}/b`,
      )
    ).statusCode,
    200,
  );
  t.equal(
    (
      await register(
        bob,
        unsafeRecipient,
        privateKeyToAccount(generatePrivateKey()).address,
        `http://127.0.0.2:${port(webhook)}/c`,
      )
    ).statusCode,
    200,
  );
  t.equal(
    (await register(alice, recipient, senderKey.address, 'https://x.example')).statusCode,
    403,
    'only the owner registers an agent',
  );
});

async function signed(
  overrides: { action?: string; to?: string; timestamp?: number; messageId?: string } = {},
  signer = senderKey,
) {
  const message = {
    messageId: overrides.messageId ?? crypto.randomUUID(),
    action: overrides.action ?? 'PING',
    fromAgentId: sender,
    toAgentId: overrides.to ?? recipient,
    payload: { hello: 'world', n: 1 },
    timestamp: overrides.timestamp ?? Math.floor(Date.now() / 1000),
  };
  return { ...message, signature: await signer.signTypedData(busTypedData(message, chain.chainId)) };
}
const send = (body: object) =>
  app.inject({
    method: 'POST',
    url: '/api/underground/bus/send',
    headers: identityHeaders({ surface: 'backend' }),
    payload: body,
  });

t.test("a signed message is accepted and delivered to the recipient's webhook once", async (t) => {
  const message = await signed();
  const arrived = new Promise<Record<string, unknown>>((r) => deliveredWaiters.push(r));
  const res = await send(message);
  t.same(res.json(), { success: true, messageId: message.messageId });
  t.has(await arrived, {
    messageId: message.messageId,
    action: 'PING',
    fromAgentId: sender,
    toAgentId: recipient,
    payload: { hello: 'world', n: 1 },
  });
  t.equal((await send(message)).statusCode, 409, 'a reused messageId is refused');
});

t.test('forged, tampered and stale messages are refused and not delivered', async (t) => {
  const before = delivered.length;
  const stranger = privateKeyToAccount(generatePrivateKey());
  t.same((await send(await signed({}, stranger))).json(), { error: 'Invalid signature' });
  const tampered = await signed();
  t.equal((await send({ ...tampered, payload: { hello: 'mallory', n: 1 } })).statusCode, 401);
  t.equal((await send({ ...tampered, toAgentId: unsafeRecipient })).statusCode, 401);
  t.equal((await send(await signed({ timestamp: Math.floor(Date.now() / 1000) - 3600 }))).statusCode, 401, 'stale');
  const rows = await systemDb()
    .selectFrom('bus_messages')
    .select('message_id')
    .where('message_id', '=', tampered.messageId)
    .execute();
  t.equal(rows.length, 0);
  t.equal(delivered.length, before);
});

t.test('BOOKING_ actions go through the negotiation service; AMPLIFY_ without one configured is 503', async (t) => {
  const message = await signed({ action: 'BOOKING_REQUEST' });
  const arrived = new Promise<Record<string, unknown>>((r) => deliveredWaiters.push(r));
  t.equal((await send(message)).statusCode, 200);
  t.has(await arrived, { action: 'BOOKING_REQUEST', routing: { negotiated: true, action: 'BOOKING_REQUEST' } });
  const amplify = await signed({ action: 'AMPLIFY_POST' });
  t.equal((await send(amplify)).statusCode, 503);
  t.equal((await send(amplify)).statusCode, 503, 'a refused message may be retried: it was not recorded');
});

t.test('delivery refuses a loopback address that is not allow-listed', async (t) => {
  const message = await signed({ to: unsafeRecipient });
  const failed = new Promise<string>((resolve) => {
    const onFailed = (job: { id?: string } | undefined, error: Error) => {
      if (job?.id === deliveryJobId(message.messageId)) {
        workers.delivery.off('failed', onFailed);
        resolve(error.message);
      }
    };
    workers.delivery.on('failed', onFailed);
  });
  const before = delivered.length;
  t.equal((await send(message)).statusCode, 200);
  t.equal(await failed, 'webhook address refused');
  const row = await systemDb()
    .selectFrom('bus_messages')
    .select(['delivered_at', 'delivery_error'])
    .where('message_id', '=', message.messageId)
    .executeTakeFirstOrThrow();
  t.same(row, { delivered_at: null, delivery_error: 'webhook address refused' });
  t.equal(delivered.length, before);
});
