import t from 'tap';
import { randomBytes } from 'node:crypto';
import { loadAgentsConfig } from '../../src/config.ts';

// The snapshot store's settings: S3 is chosen with its bucket, credentials come in pairs, and a
// refusal names what is missing without echoing a secret.
const env = {
  ...process.env,
  IDENTITY_SECRET: randomBytes(32).toString('hex'),
  ENCRYPTION_KEYS: `k1:${randomBytes(32).toString('base64')}`,
  NODE_ENV: 'production',
  RUNTIME_DRIVER: 'docker',
};
const secretAccessKey = `secret-${randomBytes(16).toString('hex')}`;

t.test('a directory by default', async (t) => {
  t.equal(loadAgentsConfig(env).SNAPSHOT_STORE, 'directory');
});

t.test('S3 without a bucket: the service refuses to start, saying so', async (t) => {
  t.throws(() => loadAgentsConfig({ ...env, SNAPSHOT_STORE: 's3' }), {
    name: /^ConfigError$/,
    message: /SNAPSHOT_STORE=s3 needs SNAPSHOT_S3_BUCKET/,
  });
  t.match(
    loadAgentsConfig({ ...env, SNAPSHOT_STORE: 's3', SNAPSHOT_S3_BUCKET: 'archives' }),
    {
      SNAPSHOT_STORE: /^s3$/,
      SNAPSHOT_S3_BUCKET: /^archives$/,
      SNAPSHOT_S3_REGION: /^us-east-1$/,
      SNAPSHOT_S3_ENDPOINT: '',
    },
    "with it, AWS S3 and the SDK's credential chain",
  );
  t.throws(
    () => loadAgentsConfig({ ...env, SNAPSHOT_STORE: 'bucket' }),
    /SNAPSHOT_STORE/,
    'an unknown store is refused',
  );
});

t.test('access key id and secret go together; the secret is never in the message', async (t) => {
  const s3 = { ...env, SNAPSHOT_STORE: 's3', SNAPSHOT_S3_BUCKET: 'archives' };
  t.throws(
    () => loadAgentsConfig({ ...s3, SNAPSHOT_S3_ACCESS_KEY_ID: 'AKIAEXAMPLE' }),
    /SNAPSHOT_S3_ACCESS_KEY_ID and SNAPSHOT_S3_SECRET_ACCESS_KEY go together/,
  );
  let refusal = '';
  try {
    loadAgentsConfig({ ...s3, SNAPSHOT_S3_SECRET_ACCESS_KEY: secretAccessKey });
  } catch (error) {
    refusal = (error as Error).message;
  }
  t.match(refusal, /go together/);
  t.notMatch(refusal, secretAccessKey);
  t.has(
    loadAgentsConfig({
      ...s3,
      SNAPSHOT_S3_ACCESS_KEY_ID: 'AKIAEXAMPLE',
      SNAPSHOT_S3_SECRET_ACCESS_KEY: secretAccessKey,
    }),
    { SNAPSHOT_S3_ACCESS_KEY_ID: 'AKIAEXAMPLE' },
  );
});

t.test('an endpoint is a service URL, not a bucket or path', async (t) => {
  const s3 = { ...env, SNAPSHOT_STORE: 's3', SNAPSHOT_S3_BUCKET: 'archives' };
  t.equal(
    loadAgentsConfig({ ...s3, SNAPSHOT_S3_ENDPOINT: 'https://minio.internal:9000' }).SNAPSHOT_S3_ENDPOINT,
    'https://minio.internal:9000',
  );
  for (const endpoint of ['minio.internal:9000', 'https://minio.internal:9000/archives', 'ftp://minio.internal']) {
    t.throws(
      () => loadAgentsConfig({ ...s3, SNAPSHOT_S3_ENDPOINT: endpoint }),
      /SNAPSHOT_S3_ENDPOINT must be/,
      endpoint,
    );
  }
  t.throws(
    () => loadAgentsConfig({ ...s3, SNAPSHOT_S3_PREFIX: 'snap shots/' }),
    /SNAPSHOT_S3_PREFIX/,
    'a prefix of key-safe characters only',
  );
});
