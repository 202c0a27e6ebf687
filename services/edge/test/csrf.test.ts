import t from 'tap';
import { hashToken, randomToken } from '@agentyard/crypto';
import { createUserRow, systemDb } from '@agentyard/testing';
import { buildEdge, startEchoService } from './helper.ts';

t.test('cookie-authenticated writes from another site are refused with 403 CSRF', async (t) => {
  const upstream = await startEchoService(t);
  const edge = await buildEdge(t, 'web', upstream, {
    PUBLIC_BASE_URL: 'https://app.agentyard.dev',
    CSRF_TRUSTED_ORIGINS: 'https://admin.agentyard.dev',
  });
  const user = await createUserRow();
  const token = randomToken();
  await systemDb()
    .insertInto('sessions')
    .values({ user_id: user.id, token_hash: hashToken(token), expires_at: new Date(Date.now() + 60_000) })
    .execute();
  const cookie = `agentyard-session=${token}`;
  const post = (headers: Record<string, string>, method: 'POST' | 'GET' | 'DELETE' = 'POST') =>
    edge.inject({ method, url: '/echo', headers });

  const cases: [string, Record<string, string>, number, ('POST' | 'GET' | 'DELETE')?][] = [
    ['foreign Origin', { cookie, origin: 'https://evil.example' }, 403],
    ['Sec-Fetch-Site cross-site', { cookie, 'sec-fetch-site': 'cross-site' }, 403],
    ['foreign Origin on DELETE', { cookie, origin: 'https://evil.example' }, 403, 'DELETE'],
    ['null Origin', { cookie, origin: 'null' }, 403],
    ['same origin', { cookie, origin: 'https://app.agentyard.dev' }, 200],
    ['browser says same-origin', { cookie, origin: 'http://localhost:3000', 'sec-fetch-site': 'same-origin' }, 200],
    ['allow-listed origin', { cookie, origin: 'https://admin.agentyard.dev', 'sec-fetch-site': 'same-site' }, 200],
    ['non-browser client (no Origin)', { cookie }, 200],
    ['cross-site read', { cookie, origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' }, 200, 'GET'],
    ['no session cookie', { origin: 'https://evil.example' }, 200],
  ];
  for (const [name, headers, status, method] of cases) {
    const res = await post(headers, method);
    t.equal(res.statusCode, status, name);
    if (status === 403) t.same(res.json(), { error: 'Cross-site request refused', code: 'CSRF' }, name);
  }
});
