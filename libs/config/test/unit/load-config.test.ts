import t from 'tap';
import { Type } from 'typebox';
import { adminEmailSet, ConfigError, loadConfig, Secret } from '@agentyard/config';

const extra = {
  WIDGET_SECRET: Secret({ description: 'a secret of the test' }),
  WIDGET_PORT: Type.Integer({ default: 4000, minimum: 1, maximum: 65535, description: 'a port' }),
};
const base = { IDENTITY_SECRET: 'i'.repeat(43) };

t.test('production refuses to start without a secret, naming it and echoing no value', async (t) => {
  const error = t.throws(() =>
    loadConfig(extra, { files: false, env: { ...base, NODE_ENV: 'production', IDENTITY_SECRET: '' } }),
  ) as ConfigError;
  t.type(error, ConfigError);
  t.match(error.message, /Missing required secret\(s\): .*IDENTITY_SECRET.*WIDGET_SECRET/);
  t.match(error.message, /production never generates secrets/);
});

t.test('outside production a missing secret points at npm start', async (t) => {
  const error = t.throws(() =>
    loadConfig(extra, { files: false, env: { ...base, NODE_ENV: 'development' } }),
  ) as ConfigError;
  t.match(error.message, /Missing secret\(s\): WIDGET_SECRET\. Run `npm start` once/);
});

t.test('values are converted to their types, defaults filled, bad ones named without the secret', async (t) => {
  const config = loadConfig(extra, {
    files: false,
    env: { ...base, NODE_ENV: 'test', WIDGET_SECRET: 'shh-the-secret-value', WIDGET_PORT: '4321' },
  });
  t.equal(config.WIDGET_PORT, 4321);
  t.equal(config.NODE_ENV, 'test');
  t.equal(config.BODY_LIMIT_BYTES, 1048576, 'a default');
  const error = t.throws(() =>
    loadConfig(extra, { files: false, env: { ...base, WIDGET_SECRET: 'shh-the-secret-value', WIDGET_PORT: '70000' } }),
  ) as ConfigError;
  t.match(error.message, /Invalid configuration:\n {2}WIDGET_PORT: /);
  t.notMatch(error.message, /shh-the-secret-value/);
  const short = t.throws(() =>
    loadConfig(extra, { files: false, env: { ...base, WIDGET_SECRET: 'too-short' } }),
  ) as ConfigError;
  t.match(short.message, /WIDGET_SECRET: /, 'a secret too short is named');
  t.notMatch(short.message, /too-short/, 'and never echoed');
});

t.test('admin emails are compared trimmed and lower-cased', async (t) => {
  t.same([...adminEmailSet(' Ops@Example.com, ,root@example.com ')], ['ops@example.com', 'root@example.com']);
});
