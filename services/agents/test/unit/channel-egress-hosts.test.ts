import { randomBytes } from 'node:crypto';
import t from 'tap';
import { loadAgentsConfig } from '../../src/config.ts';
import { channelEgressHosts, SUPPORTED_CHANNELS } from '../../src/domain/gateway/channel-vault.ts';

// Issue 29: an agent's egress grant is the hosts of its enabled channels, from the channel catalog.
t.test("the hosts an agent's channels need come from the catalog, enabled channels only", async (t) => {
  t.same(SUPPORTED_CHANNELS.telegram?.hosts, ['api.telegram.org'], "Telegram's Bot API host");
  t.same(channelEgressHosts([{ channel: 'telegram', enabled: true }]), ['api.telegram.org']);
  t.same(channelEgressHosts([{ channel: 'telegram', enabled: false }]), [], 'a switched-off channel needs no host');
  t.same(channelEgressHosts([]), [], 'no channel: no host');
  t.same(
    channelEgressHosts([{ channel: 'telegram', enabled: true }], 'http://127.0.0.1:4010/'),
    ['127.0.0.1'],
    "a development Bot API root stands for Telegram's host",
  );
  for (const [name, channel] of Object.entries(SUPPORTED_CHANNELS))
    t.ok(channel.hosts.length > 0, `${name} names its hosts`);
});

t.test('production refuses the egress proxy without a grant key (one allow-list for every agent)', async (t) => {
  const base = Object.fromEntries(Object.entries(process.env).filter(([key]) => key !== 'EGRESS_GRANT_KEY'));
  const env = {
    ...base,
    IDENTITY_SECRET: randomBytes(32).toString('hex'),
    ENCRYPTION_KEYS: `k1:${randomBytes(32).toString('base64')}`,
    RUNTIME_DRIVER: 'docker',
    NODE_ENV: 'production',
    RUNTIME_EGRESS_PROXY: 'http://egress:3128',
  };
  t.throws(() => loadAgentsConfig(env), /RUNTIME_EGRESS_PROXY needs EGRESS_GRANT_KEY in production/);
  t.equal(
    loadAgentsConfig({ ...env, EGRESS_GRANT_KEY: randomBytes(32).toString('base64url') }).EGRESS_GRANT_KEY?.length,
    43,
    'with one it starts',
  );
  t.doesNotThrow(() => loadAgentsConfig({ ...env, RUNTIME_EGRESS_PROXY: '' }), 'no proxy: no grants to sign');
});
