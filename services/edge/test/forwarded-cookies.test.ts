import t from 'tap';
import { route } from '@agentyard/proto-schemas';
import { buildEdge, startEchoService } from './helper.ts';

const routes = [
  route({
    method: 'GET',
    url: '/echo',
    service: 'auth',
    surfaces: ['web'],
    auth: 'none',
    forwardCookies: ['oauth-binding', 'second'],
    summary: 'echo',
    schema: { response: {} },
  }),
  route({
    method: 'GET',
    url: '/api/register',
    service: 'auth',
    surfaces: ['web'],
    auth: 'none',
    summary: 'echo',
    schema: { response: {} },
  }),
];

t.test('a route passes on only the cookies it names; every other route gets none', async (t) => {
  const upstream = await startEchoService(t);
  const edge = await buildEdge(t, 'web', upstream, {}, routes);
  const cookie = 'agentyard-session=not-for-services; oauth-binding=abc_123-XYZ; tracking=1; second=two';

  const named = (await edge.inject({ method: 'GET', url: '/echo', headers: { cookie } })).json();
  t.equal(
    named.headers.cookie,
    'oauth-binding=abc_123-XYZ; second=two',
    'the named cookies, and nothing else (the session cookie neither)',
  );

  const other = (await edge.inject({ method: 'GET', url: '/api/register', headers: { cookie } })).json();
  t.notOk(other.headers.cookie, 'a route without the option gets no cookie at all');

  const none = (
    await edge.inject({ method: 'GET', url: '/echo', headers: { cookie: 'agentyard-session=x; tracking=1' } })
  ).json();
  t.notOk(none.headers.cookie, 'no Cookie header when none of the named cookies is there');
  t.notOk((await edge.inject({ method: 'GET', url: '/echo' })).json().headers.cookie);
});
