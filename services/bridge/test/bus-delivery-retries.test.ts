import t from 'tap';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { createQueues, QUEUES } from '@agentyard/queue';
import { createUserRow, systemDb } from '@agentyard/testing';
import { deliveryJobId } from '../src/domain/privileged/bus.ts';
import { busTypedData } from '../src/domain/bus-signatures.ts';
import { startWorkers } from '../src/app.ts';
import { agentOf, busMessage, registerOnBus, sendOnBus, startWebhookPeer } from './support/bus-parties.ts';
import { build } from './helper.ts';

// Delivery to a recipient's webhook through the real queue and worker: retried after a failure,
// never following a redirect. Plain account signatures are checked locally: no chain is needed.
t.setTimeout(120_000);
const webhook = await startWebhookPeer(t);
const { app, config } = await build(t, {
  UNDERGROUND_RPC_URL: 'http://127.0.0.1:9',
  BUS_DELIVERY_ALLOWED_ADDRESSES: '127.0.0.1',
  QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}-delivery-retries`,
});
const workers = await startWorkers(config, { systemDb: systemDb() });
t.teardown(() => workers.close());

const alice = await createUserRow();
const bob = await createUserRow();
const signer = privateKeyToAccount(generatePrivateKey());
const sender = await agentOf(alice.id);
const [flaky, redirecting] = [await agentOf(bob.id), await agentOf(bob.id)];
await registerOnBus(t, app, alice, sender, signer.address, webhook.url('/alice'));
await registerOnBus(t, app, bob, flaky, privateKeyToAccount(generatePrivateKey()).address, webhook.url('/flaky'));
await registerOnBus(
  t,
  app,
  bob,
  redirecting,
  privateKeyToAccount(generatePrivateKey()).address,
  webhook.url('/redirecting'),
);

/** Resolves with the job's outcome once the worker finished with it for good. */
function settled(messageId: string): Promise<'completed' | 'failed'> {
  const id = deliveryJobId(messageId);
  return new Promise((resolve) => {
    const onCompleted = (job: { id?: string }) => {
      if (job.id === id) done('completed');
    };
    const onFailed = (
      job: { id?: string; attemptsMade: number; opts: { attempts?: number } } | undefined,
      error: Error,
    ) => {
      if (job?.id === id && (error.name === 'UnrecoverableError' || job.attemptsMade >= (job.opts.attempts ?? 1)))
        done('failed');
    };
    const done = (outcome: 'completed' | 'failed') => {
      workers.delivery.off('completed', onCompleted);
      workers.delivery.off('failed', onFailed);
      resolve(outcome);
    };
    workers.delivery.on('completed', onCompleted);
    workers.delivery.on('failed', onFailed);
  });
}
const statusOf = (messageId: string) =>
  systemDb()
    .selectFrom('bus_messages')
    .select(['delivered_at', 'delivery_error', 'delivery_attempts'])
    .where('message_id', '=', messageId)
    .executeTakeFirstOrThrow();
const queues = createQueues({ redisUrl: config.REDIS_URL, prefix: config.QUEUE_PREFIX });
t.teardown(() => queues.close());
const jobState = async (messageId: string) =>
  (await queues.get(QUEUES.busDelivery).getJob(deliveryJobId(messageId)))?.getState();
const hitsFor = (messageId: string) => webhook.hits.filter((h) => h.body.messageId === messageId);

t.test('a webhook that fails, then succeeds: delivered exactly once, after a retry', async (t) => {
  const message = busMessage(sender, flaky);
  let calls = 0;
  webhook.answerWith((hit, res) => {
    if (hit.path === '/flaky' && calls++ === 0) {
      res.writeHead(500).end('{"error":"busy"}');
      return;
    }
    res.end('{}');
  });
  const outcome = settled(message.messageId);
  t.equal(
    (
      await sendOnBus(app, {
        ...message,
        signature: await signer.signTypedData(busTypedData(message, config.UNDERGROUND_CHAIN_ID)),
      })
    ).statusCode,
    200,
  );
  t.equal(await outcome, 'completed');
  const hits = hitsFor(message.messageId);
  t.equal(hits.length, 2, 'one failed try, one delivery');
  t.has(hits[1], {
    path: '/flaky',
    body: { messageId: message.messageId, action: 'PING', payload: { hello: 'world', n: 1 } },
  });
  const status = await statusOf(message.messageId);
  t.ok(status.delivered_at, 'recorded as delivered');
  t.same({ error: status.delivery_error, attempts: status.delivery_attempts }, { error: null, attempts: 2 });
  t.equal(await jobState(message.messageId), 'completed', 'nothing left to retry');
});

t.test('a webhook answering 302 to an allowed address: not followed, a failure, not retried', async (t) => {
  const message = busMessage(sender, redirecting);
  webhook.answerWith((hit, res) => {
    if (hit.path === '/redirecting') {
      res.writeHead(302, { location: webhook.url('/elsewhere') }).end();
      return;
    }
    res.end('{}');
  });
  const outcome = settled(message.messageId);
  t.equal(
    (
      await sendOnBus(app, {
        ...message,
        signature: await signer.signTypedData(busTypedData(message, config.UNDERGROUND_CHAIN_ID)),
      })
    ).statusCode,
    200,
  );
  t.equal(await outcome, 'failed');
  t.same(
    hitsFor(message.messageId).map((h) => h.path),
    ['/redirecting'],
    'the redirect target was never called',
  );
  t.equal(webhook.hits.filter((h) => h.path === '/elsewhere').length, 0);
  const status = await statusOf(message.messageId);
  t.same(status, {
    delivered_at: null,
    delivery_error: 'webhook redirected (302); redirects are not followed',
    delivery_attempts: 1,
  });
  t.equal(await jobState(message.messageId), 'failed');
});
