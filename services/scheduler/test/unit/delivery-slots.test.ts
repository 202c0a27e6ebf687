import t from 'tap';
import { deliverySlots } from '../../src/domain/delivery-slots.ts';

/** Work that holds until the test lets it go. */
function held() {
  const waiting: (() => void)[] = [];
  const work = () => new Promise<void>((resolve) => waiting.push(resolve));
  return { waiting, work };
}
const tick = async () => {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
};

t.test('deliveries get ready while the slots are taken, at most `limit` of them, then send in order', async (t) => {
  const slots = deliverySlots(2);
  const ready: number[] = [];
  const sending: number[] = [];
  const sends = held();
  const done = [1, 2, 3, 4, 5, 6].map((n) =>
    slots.readyThenRun(
      async () => void ready.push(n),
      async () => {
        sending.push(n);
        await sends.work();
      },
    ),
  );
  await tick();
  t.same(sending, [1, 2], 'two slots: two send');
  t.same(ready, [1, 2, 3, 4], 'two more are ready meanwhile, not more');
  t.equal(slots.busy, 2);
  sends.waiting.shift()!();
  await tick();
  t.same(sending, [1, 2, 3], 'a freed slot goes to the first one ready');
  t.same(ready, [1, 2, 3, 4, 5], 'and the next one gets ready');
  while (sends.waiting.length) {
    sends.waiting.shift()!();
    await tick();
  }
  await Promise.all(done);
  t.same(sending, [1, 2, 3, 4, 5, 6]);
  t.equal(slots.busy, 0, 'every slot given back');
});

t.test('a delivery whose getting ready fails takes no slot and gives its place back', async (t) => {
  const slots = deliverySlots(1);
  const sent: number[] = [];
  const failing = slots.readyThenRun(
    async () => {
      throw new Error('not marked');
    },
    async () => void sent.push(0),
  );
  await t.rejects(failing, /not marked/);
  await slots.readyThenRun(
    async () => {},
    async () => void sent.push(1),
  );
  t.same(sent, [1], 'only the ready one was sent');
  t.equal(slots.busy, 0);
});

t.test('run() shares the same slots', async (t) => {
  const slots = deliverySlots(1);
  const sends = held();
  const first = slots.run(sends.work);
  const order: string[] = [];
  const second = slots.readyThenRun(
    async () => void order.push('ready'),
    async () => void order.push('sent'),
  );
  await tick();
  t.same(order, ['ready'], 'ready at once, its send waits for the slot run() holds');
  sends.waiting.shift()!();
  await Promise.all([first, second]);
  t.same(order, ['ready', 'sent']);
});
