import t from 'tap';
import { randomBytes } from 'node:crypto';
import type { HttpError } from '@agentyard/http';
import { loadAgentsConfig } from '../../src/config.ts';
import { supportedChannel } from '../../src/domain/gateway/channel-vault.ts';
import { stateOfAccount } from '../../src/domain/gateway/channel-status.ts';

t.test('the development Bot API root: refused in production, a root only elsewhere', async (t) => {
  const secrets = {
    IDENTITY_SECRET: randomBytes(32).toString('hex'),
    ENCRYPTION_KEYS: `k1:${randomBytes(32).toString('base64')}`,
  };
  const env = {
    ...process.env,
    ...secrets,
    RUNTIME_DRIVER: 'docker',
    AGENT_TELEGRAM_API_ROOT: 'http://127.0.0.1:39999',
  };
  t.throws(
    () => loadAgentsConfig({ ...env, NODE_ENV: 'production' }),
    /AGENT_TELEGRAM_API_ROOT is refused in production/,
  );
  t.doesNotThrow(
    () => loadAgentsConfig({ ...env, NODE_ENV: 'production', AGENT_TELEGRAM_API_ROOT: '' }),
    'production without it starts',
  );
  t.equal(
    loadAgentsConfig({ ...env, NODE_ENV: 'test' }).AGENT_TELEGRAM_API_ROOT,
    'http://127.0.0.1:39999',
    'tests may set it',
  );
  t.throws(
    () => loadAgentsConfig({ ...env, NODE_ENV: 'test', AGENT_TELEGRAM_API_ROOT: 'http://127.0.0.1:39999/bot123:abc' }),
    /must be a Bot API root/,
    'a full bot endpoint is not a root',
  );
});

t.test('which channels: Telegram runs; the others answer 501 naming why; an unknown name 404', async (t) => {
  t.ok(supportedChannel('telegram').credentials.includes('botToken'), "Telegram's credential is OpenClaw's botToken");
  for (const [channel, why] of [
    ['discord', /@openclaw\/discord/],
    ['matrix', /@openclaw\/matrix/],
    ['msteams', /@openclaw\/msteams/],
    ['slack', /cannot be installed here/],
    ['whatsapp', /cannot be installed here/],
  ] as const) {
    const error = t.throws(() => supportedChannel(channel)) as unknown as HttpError;
    t.equal(error.statusCode, 501, `${channel}: 501`);
    t.match(error.message, why, `${channel}: says why`);
  }
  t.equal((t.throws(() => supportedChannel('carrier-pigeon')) as unknown as HttpError).statusCode, 404);
});

t.test("the gateway's account status in a person's words", async (t) => {
  t.has(
    stateOfAccount({
      accountId: 'default',
      enabled: true,
      configured: true,
      running: true,
      connected: true,
      lastError: null,
    }),
    { status: 'connected' },
  );
  t.match(stateOfAccount({ accountId: 'default', running: false, lastError: '401: Unauthorized' }), {
    status: /^error$/,
    detail: '401: Unauthorized',
  });
  t.has(stateOfAccount({ accountId: 'default', running: true, connected: false }), { status: 'connecting' });
  t.has(stateOfAccount({ accountId: 'default', enabled: false }), { status: 'off' });
  t.has(stateOfAccount(undefined), { status: 'connecting' });
});
