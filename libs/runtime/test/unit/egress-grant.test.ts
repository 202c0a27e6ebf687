import { randomBytes, randomUUID } from 'node:crypto';
import t from 'tap';
import { grantedProxyUrl, hostGranted, signEgressGrant, verifyEgressGrant } from '../../src/index.ts';

// An agent's egress grant (issue 29): the hosts its connected channels need, signed with the key the
// agents service shares with the egress proxy; the proxy trusts only what verifies.
const key = randomBytes(32).toString('base64url');
const agentId = randomUUID();

t.test('a grant signed for an agent verifies as its hosts', async (t) => {
  const grant = signEgressGrant(key, agentId, ['API.Telegram.org.', 'api.telegram.org']);
  t.same(verifyEgressGrant(key, agentId, grant), ['api.telegram.org'], 'normalized, once');
  t.same(
    verifyEgressGrant(key, agentId, signEgressGrant(key, agentId, [])),
    [],
    'an agent without channels is granted no host',
  );
});

t.test('a grant is refused when changed, another agent presents it, or another key signed it', async (t) => {
  const grant = signEgressGrant(key, agentId, ['api.telegram.org']);
  const [payload, mac] = grant.split('.') as [string, string];
  const widened = Buffer.from(JSON.stringify(['api.telegram.org', 'evil.example'])).toString('base64url');
  t.equal(verifyEgressGrant(key, agentId, `${widened}.${mac}`), null, 'hosts added to the payload');
  const flipped = Buffer.from(mac, 'base64url');
  flipped[0]! ^= 1;
  t.equal(
    verifyEgressGrant(key, agentId, `${payload}.${flipped.toString('base64url')}`),
    null,
    'one bit of the MAC changed',
  );
  t.equal(verifyEgressGrant(key, agentId, `${payload}.${mac.slice(0, 10)}`), null, 'a shortened MAC');
  t.equal(verifyEgressGrant(key, randomUUID(), grant), null, "another agent's id with this grant");
  t.equal(verifyEgressGrant(randomBytes(32).toString('base64url'), agentId, grant), null, 'another key');
  for (const junk of ['', '.', payload, `${grant}.x`, 'not a grant'])
    t.equal(verifyEgressGrant(key, agentId, junk), null, `junk: ${JSON.stringify(junk)}`);
});

t.test('granted hosts match exactly; `*.host` its subdomains only', async (t) => {
  t.ok(hostGranted(['api.telegram.org'], 'API.telegram.org'));
  t.notOk(hostGranted(['api.telegram.org'], 'telegram.org'), 'not the parent');
  t.notOk(hostGranted(['api.telegram.org'], 'x.api.telegram.org'), 'not a subdomain unless granted so');
  t.notOk(hostGranted(['api.telegram.org'], 'api.telegram.org.evil.example'), 'not a name that merely starts with it');
  t.ok(hostGranted(['*.discord.gg'], 'gateway.discord.gg'));
  t.notOk(hostGranted(['*.discord.gg'], 'evildiscord.gg'), 'a suffix that is not a subdomain');
  t.notOk(hostGranted([], 'api.telegram.org'), 'nothing granted: nothing');
});

t.test("the proxy URL carries the agent's id and grant as credentials, as they are", async (t) => {
  const url = new URL(grantedProxyUrl('http://egress:3128', key, agentId, ['api.telegram.org']));
  t.equal(url.host, 'egress:3128');
  t.equal(url.username, agentId);
  t.same(verifyEgressGrant(key, decodeURIComponent(url.username), decodeURIComponent(url.password)), [
    'api.telegram.org',
  ]);
  t.equal(decodeURIComponent(url.password), url.password, 'no character of the grant needs escaping');
});
