import t from 'tap';
import { parseUnits, type Address } from 'viem';
import { createUserRow, identityHeaders, malformedCursors, startChain, systemDb, walkPages } from '@agentyard/testing';
import { build } from './helper.ts';

t.setTimeout(180_000);
const chain = await startChain();
t.teardown(() => chain.stop());
const usdc = await chain.deployToken({ name: 'USD Coin', symbol: 'USDC', decimals: 6 });
const { app } = await build(t, {
  UNDERGROUND_RPC_URL: chain.rpcUrl,
  UNDERGROUND_CHAIN_ID: String(chain.chainId),
  USDC_CONTRACT_ADDRESS: usdc,
});

async function agentOf(userId: string) {
  return (
    await systemDb()
      .insertInto('agents')
      .values({
        user_id: userId,
        name: 'a',
        model: 'm',
        tools_profile: 'messaging',
        subdomain: `ug-${crypto.randomUUID().slice(0, 8)}`,
      })
      .returning('id')
      .executeTakeFirstOrThrow()
  ).id;
}
const alice = await createUserRow();
const bob = await createUserRow();
const aliceAgent = await agentOf(alice.id);
const bobAgent = await agentOf(bob.id);
const as = (u: { id: string; email: string }) =>
  identityHeaders({ surface: 'backend', auth: 'service', userId: u.id, email: u.email });

t.test('wallets: created for own agents only, key sealed, real on-chain USDC balance', async (t) => {
  const res = await app.inject({
    method: 'POST',
    url: '/api/underground/wallets',
    headers: as(alice),
    payload: { agentId: aliceAgent, userId: bob.id },
  });
  t.equal(res.statusCode, 201);
  const { address } = res.json() as { address: Address };
  t.same(res.json(), { address, agentId: aliceAgent });
  const row = await systemDb()
    .selectFrom('underground_wallets')
    .selectAll()
    .where('address', '=', address)
    .executeTakeFirstOrThrow();
  t.equal(row.user_id, alice.id, 'the body userId is ignored');
  t.match(row.private_key_sealed, /^v1\./);
  t.equal(
    (
      await app.inject({
        method: 'POST',
        url: '/api/underground/wallets',
        headers: as(alice),
        payload: { agentId: bobAgent },
      })
    ).statusCode,
    403,
  );
  t.equal(
    (
      await app.inject({
        method: 'POST',
        url: '/api/underground/wallets',
        headers: identityHeaders({ surface: 'backend', auth: 'service' }),
        payload: { agentId: aliceAgent },
      })
    ).statusCode,
    401,
  );

  await chain.mint(usdc, address, parseUnits('1234.500001', 6));
  const balance = await app.inject({
    method: 'GET',
    url: `/api/underground/wallets/${address.toLowerCase()}/balance`,
    headers: as(alice),
  });
  t.same(balance.json(), { address, balance_usdc: '1234.500001' });
  t.equal(
    (await app.inject({ method: 'GET', url: `/api/underground/wallets/${address}/balance`, headers: as(bob) }))
      .statusCode,
    404,
    "not bob's wallet",
  );
});

t.test('events: own agents, newest event date first, exact prices', async (t) => {
  const event = (name: string, eventDate: string) => ({
    agentId: aliceAgent,
    name,
    description: 'd',
    venue: 'v',
    eventDate,
    ticketPriceUsdc: '12.345678',
    totalTickets: 100,
  });
  t.equal(
    (
      await app.inject({
        method: 'POST',
        url: '/api/underground/events',
        headers: as(alice),
        payload: event('early', '2027-01-01T20:00:00Z'),
      })
    ).statusCode,
    201,
  );
  const late = await app.inject({
    method: 'POST',
    url: '/api/underground/events',
    headers: as(alice),
    payload: event('late', '2027-06-01T20:00:00Z'),
  });
  t.match(late.json(), {
    id: Number,
    agent_id: aliceAgent,
    name: /^late$/,
    event_date: '2027-06-01T20:00:00.000Z',
    ticket_price_usdc: /^12\.345678$/,
    total_tickets: 100,
  });
  t.equal(
    (
      await app.inject({
        method: 'POST',
        url: '/api/underground/events',
        headers: as(bob),
        payload: event('x', '2027-01-01T20:00:00Z'),
      })
    ).statusCode,
    403,
  );
  for (const bad of [
    { totalTickets: 0 },
    { totalTickets: 1.5 },
    { ticketPriceUsdc: '1.1234567' },
    { ticketPriceUsdc: 12 },
  ]) {
    t.equal(
      (
        await app.inject({
          method: 'POST',
          url: '/api/underground/events',
          headers: as(alice),
          payload: { ...event('x', '2027-01-01T20:00:00Z'), ...bad },
        })
      ).statusCode,
      400,
      JSON.stringify(bad),
    );
  }
  t.same(
    (await app.inject({ method: 'GET', url: '/api/underground/events', headers: as(alice) }))
      .json()
      .map((e: { name: string }) => e.name),
    ['late', 'early'],
  );
  t.same((await app.inject({ method: 'GET', url: '/api/underground/events', headers: as(bob) })).json(), []);
});

t.test('splits: shares sum to 100, exact amounts, recipients required', async (t) => {
  const recipients = [
    { address: chain.accounts[1]!.address, share: 33.33 },
    { address: chain.accounts[2]!.address, share: 33.33 },
    { address: chain.accounts[3]!.address, share: 33.34 },
  ];
  const res = await app.inject({
    method: 'POST',
    url: '/api/underground/splits',
    headers: as(alice),
    payload: { agentId: aliceAgent, name: 'tour', totalAmount: '100.01', recipients },
  });
  t.equal(res.statusCode, 200);
  t.match(res.json(), { success: true, splitId: String, status: /^completed$/ });
  const rows = await systemDb()
    .selectFrom('underground_split_recipients')
    .select(['amount_usdc'])
    .where('split_id', '=', res.json().splitId)
    .orderBy('position')
    .execute();
  t.same(
    rows.map((r) => r.amount_usdc),
    ['33.333333', '33.333333', '33.343334'],
  );
  const post = (payload: object) =>
    app.inject({
      method: 'POST',
      url: '/api/underground/splits',
      headers: as(alice),
      payload: { agentId: aliceAgent, name: 'x', totalAmount: '10', recipients, ...payload },
    });
  t.same((await post({ recipients: [] })).json(), { error: 'recipients must not be empty' });
  t.same((await post({ recipients: [{ address: chain.accounts[1]!.address, share: 50 }] })).json(), {
    error: 'Recipient shares must sum to 100',
  });
  t.equal((await post({ recipients: [{ address: '0x123', share: 100 }] })).statusCode, 400);
  t.equal((await post({ agentId: bobAgent })).statusCode, 403);
});

t.test(
  'events page by cursor (x-next-cursor header), newest event date first, while events are added between pages',
  async (t) => {
    const carol = await createUserRow();
    const agent = await agentOf(carol.id);
    const create = async (eventDate: string, name = eventDate) => {
      const res = await app.inject({
        method: 'POST',
        url: '/api/underground/events',
        headers: as(carol),
        payload: {
          agentId: agent,
          name,
          description: 'd',
          venue: 'v',
          eventDate,
          ticketPriceUsdc: '1',
          totalTickets: 10,
        },
      });
      return res.json().id as number;
    };
    const made: number[] = [];
    for (const day of ['01', '02', '03', '03', '04']) made.push(await create(`2027-03-${day}T20:00:00Z`));
    const added: number[] = [];
    const pages = await walkPages(
      async (cursor) => {
        const res = await app.inject({
          method: 'GET',
          url: `/api/underground/events?limit=2${cursor ? `&cursor=${cursor}` : ''}`,
          headers: as(carol),
        });
        t.equal(res.statusCode, 200);
        t.ok(Array.isArray(res.json()), 'the body stays the array of events');
        return {
          items: res.json().map((e: { id: number }) => e.id),
          nextCursor: (res.headers['x-next-cursor'] as string | undefined) ?? null,
        };
      },
      async (n) => {
        added.push(await create(n === 1 ? '2027-12-31T20:00:00Z' : '2027-02-15T20:00:00Z', `added ${n}`));
      },
    );
    // The event added with a later date sorts ahead of the cursor and is not met; the earlier one is, last.
    t.same(
      pages,
      [
        [made[4], made[3]],
        [made[2], made[1]],
        [made[0], added[1]],
      ],
      'each event once, in order, ties on a date by id',
    );
    const all = await app.inject({ method: 'GET', url: '/api/underground/events?limit=100', headers: as(carol) });
    t.equal(all.json().length, 7);
    t.notOk(all.headers['x-next-cursor'], 'no header on the last page');
    for (const cursor of malformedCursors()) {
      t.equal(
        (
          await app.inject({
            method: 'GET',
            url: `/api/underground/events?cursor=${encodeURIComponent(cursor)}`,
            headers: as(carol),
          })
        ).statusCode,
        400,
        cursor,
      );
    }
    t.equal(
      (await app.inject({ method: 'GET', url: '/api/underground/events?limit=101', headers: as(carol) })).statusCode,
      400,
    );
  },
);
