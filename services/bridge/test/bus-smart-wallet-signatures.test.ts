import t from 'tap';
import { serializeErc6492Signature, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { createUserRow, startChain, systemDb } from '@agentyard/testing';
import { busMessageHash, busSignedText, type SignedBusFields } from '../src/domain/bus-signatures.ts';
import { agentOf, busMessage, registerOnBus, sendOnBus, startWebhookPeer } from './support/bus-parties.ts';
import { build } from './helper.ts';

// Agents whose bus wallet is a smart contract: a deployed ERC-1271 wallet, and an ERC-6492
// counterfactual one that is never deployed, on a real local chain.
t.setTimeout(180_000);
const chain = await startChain();
t.teardown(() => chain.stop());
const webhook = await startWebhookPeer(t);
const { app } = await build(t, {
  UNDERGROUND_RPC_URL: chain.rpcUrl,
  UNDERGROUND_CHAIN_ID: String(chain.chainId),
  QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}-smart-wallets`,
});

const alice = await createUserRow();
const bob = await createUserRow();
const recipient = await agentOf(bob.id);
await registerOnBus(t, app, bob, recipient, privateKeyToAccount(generatePrivateKey()).address, webhook.url('/bob'));

const deployedOwner = privateKeyToAccount(generatePrivateKey());
const deployedWallet = await chain.deploySmartWallet(deployedOwner);
const deployedAgent = await agentOf(alice.id);
await registerOnBus(t, app, alice, deployedAgent, deployedWallet, webhook.url('/a'));

const futureOwner = privateKeyToAccount(generatePrivateKey());
const futureWallet = await chain.counterfactualSmartWallet(futureOwner);
const futureAgent = await agentOf(alice.id);
await registerOnBus(t, app, alice, futureAgent, futureWallet.address, webhook.url('/b'));

/** The wallet's owner signs the EIP-712 hash itself: the test wallet checks the hash it is given against its owner. */
const ownerSignsTypedData = (owner: PrivateKeyAccount, message: SignedBusFields) =>
  owner.sign({ hash: busMessageHash(message, 'eip712', chain.chainId) });
const recorded = async (messageId: string) =>
  (await systemDb().selectFrom('bus_messages').select('message_id').where('message_id', '=', messageId).execute())
    .length;

t.test('a deployed ERC-1271 wallet: EIP-712 and EIP-191 signatures by its owner are accepted', async (t) => {
  const typed = busMessage(deployedAgent, recipient);
  const res = await sendOnBus(app, { ...typed, signature: await ownerSignsTypedData(deployedOwner, typed) });
  t.same(res.json(), { success: true, messageId: typed.messageId });

  const personal = busMessage(deployedAgent, recipient, {
    action: 'HELLO',
    payload: { text: 'héllo 👋', list: [1, 2] },
  });
  const signature = await chain.signAsSmartWallet(deployedOwner, busSignedText(personal, chain.chainId), {
    address: deployedWallet,
  });
  const accepted = await sendOnBus(app, { ...personal, signature, signatureScheme: 'eip191' });
  t.same(accepted.json(), { success: true, messageId: personal.messageId });
  t.equal(await recorded(personal.messageId), 1);
});

t.test('an ERC-6492 counterfactual wallet: accepted without the wallet ever being deployed', async (t) => {
  const personal = busMessage(futureAgent, recipient);
  const signature = await chain.signAsSmartWallet(futureOwner, busSignedText(personal, chain.chainId), futureWallet);
  t.equal((await sendOnBus(app, { ...personal, signature, signatureScheme: 'eip191' })).statusCode, 200);

  const typed = busMessage(futureAgent, recipient);
  const wrapped = serializeErc6492Signature({
    address: futureWallet.factory,
    data: futureWallet.factoryData,
    signature: await ownerSignsTypedData(futureOwner, typed),
  });
  t.same((await sendOnBus(app, { ...typed, signature: wrapped })).json(), {
    success: true,
    messageId: typed.messageId,
  });
  t.equal(
    await chain.publicClient.getCode({ address: futureWallet.address }),
    undefined,
    'verification deployed nothing',
  );
});

t.test('smart-wallet signatures that do not fit are 401 and record nothing', async (t) => {
  const stranger = privateKeyToAccount(generatePrivateKey());
  const cases: [string, SignedBusFields, () => Promise<object>][] = [];
  const m1 = busMessage(deployedAgent, recipient);
  cases.push([
    "not the wallet's owner",
    m1,
    async () => ({ ...m1, signature: await ownerSignsTypedData(stranger, m1) }),
  ]);
  const m2 = busMessage(deployedAgent, recipient);
  cases.push([
    'tampered after signing',
    m2,
    async () => ({
      ...m2,
      signature: await ownerSignsTypedData(deployedOwner, m2),
      payload: { hello: 'mallory', n: 1 },
    }),
  ]);
  const m3 = busMessage(deployedAgent, recipient);
  cases.push([
    'an EIP-191 signature sent as EIP-712',
    m3,
    async () => ({
      ...m3,
      signature: await chain.signAsSmartWallet(deployedOwner, busSignedText(m3, chain.chainId), {
        address: deployedWallet,
      }),
    }),
  ]);
  const m4 = busMessage(futureAgent, recipient);
  const otherFuture = await chain.counterfactualSmartWallet(stranger);
  cases.push([
    "another counterfactual wallet's factory call",
    m4,
    async () => ({
      ...m4,
      signatureScheme: 'eip191',
      signature: await chain.signAsSmartWallet(stranger, busSignedText(m4, chain.chainId), otherFuture),
    }),
  ]);
  const m5 = busMessage(deployedAgent, recipient);
  cases.push([
    'signed for another chain',
    m5,
    async () => ({
      ...m5,
      signature: (await deployedOwner.sign({ hash: busMessageHash(m5, 'eip712', chain.chainId + 1) })) as Hex,
    }),
  ]);
  for (const [name, message, body] of cases) {
    const res = await sendOnBus(app, await body());
    t.equal(res.statusCode, 401, name);
    t.same(res.json(), { error: 'Invalid signature' }, name);
    t.equal(await recorded(message.messageId), 0, `${name}: nothing recorded`);
  }
});

t.test('an unreachable chain is a 502, not a forged signature', async (t) => {
  const { app: offline } = await build(t, {
    UNDERGROUND_RPC_URL: 'http://127.0.0.1:9',
    UNDERGROUND_CHAIN_ID: String(chain.chainId),
    RPC_TIMEOUT_MS: '1000',
  });
  const message = busMessage(deployedAgent, recipient);
  const res = await sendOnBus(offline, { ...message, signature: await ownerSignsTypedData(deployedOwner, message) });
  t.equal(res.statusCode, 502);
  t.same(res.json(), { error: 'Chain RPC unavailable' });
  t.equal(await recorded(message.messageId), 0);
});
