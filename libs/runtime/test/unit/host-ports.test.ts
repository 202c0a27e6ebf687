import t from 'tap';
import { createServer } from 'node:net';
import { claimHostPort, portIsFree } from '../../src/ports.ts';

// A host port is claimed only where nothing else listens: another platform's agent (on a database
// of its own) or any other process holding a port of the range is passed over, not fought for.
t.test('a port something listens on is passed over; a free one is claimed', async (t) => {
  const holder = createServer();
  await new Promise<void>((resolve) => holder.listen({ port: 0, host: '127.0.0.1' }, resolve));
  t.teardown(() => new Promise((resolve) => holder.close(resolve)));
  const held = (holder.address() as { port: number }).port;
  t.equal(await portIsFree(held), false, 'a listener on 127.0.0.1 makes the port busy');

  const claims: number[] = [];
  const claimed = await claimHostPort(
    { first: held, last: held + 1 },
    new Set(),
    async (port) => {
      claims.push(port);
      return true;
    },
    async (port) => port !== held,
  );
  t.equal(claimed, held + 1, 'the free one');
  t.same(claims, [held + 1], 'the busy one is never recorded');
  await t.rejects(
    claimHostPort({ first: held, last: held }, new Set(), async () => true),
    /no free host port/,
    'a range with nothing free: refused',
  );
});
