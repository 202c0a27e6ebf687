import t from 'tap';
import { randomBytes } from 'node:crypto';
import { parseKeyring, safeEqual, hashToken, randomToken } from '@agentyard/crypto';

const key = () => randomBytes(32).toString('base64');

t.test('a sealed value opens with its key and names the key that sealed it', async (t) => {
  const ring = parseKeyring(`k2:${key()},k1:${key()}`);
  const sealed = ring.encrypt('sk-live-secret', 'user:1');
  t.equal(ring.keyIdOf(sealed), 'k2');
  t.notMatch(sealed, /sk-live-secret/);
  t.equal(ring.decrypt(sealed, 'user:1'), 'sk-live-secret');
});

t.test('rotation: values sealed with an older key stay readable while it is listed', async (t) => {
  const k1 = key();
  const old = parseKeyring(`k1:${k1}`).encrypt('value');
  const rotated = parseKeyring(`k2:${key()},k1:${k1}`);
  t.equal(rotated.decrypt(old), 'value');
  t.equal(rotated.keyIdOf(rotated.encrypt('value')), 'k2');
  t.throws(() => parseKeyring(`k3:${key()}`).decrypt(old), /unknown key k1/);
});

t.test('tampering or another context is refused', async (t) => {
  const ring = parseKeyring(`k1:${key()}`);
  const sealed = ring.encrypt('value', 'user:1');
  t.throws(() => ring.decrypt(sealed, 'user:2'));
  const parts = sealed.split('.');
  parts[4] = Buffer.from('other').toString('base64url');
  t.throws(() => ring.decrypt(parts.join('.'), 'user:1'));
});

t.test('bad key specs are rejected with a clear message', async (t) => {
  t.throws(() => parseKeyring(''), /holds no key/);
  t.throws(() => parseKeyring('k1:c2hvcnQ='), /not 32 bytes/);
});

t.test('tokens: random, hashed one way, compared in constant time', async (t) => {
  const a = randomToken();
  t.ok(Buffer.from(a, 'base64url').length >= 32);
  t.not(a, randomToken());
  t.equal(hashToken(a), hashToken(a));
  t.match(hashToken(a), /^[0-9a-f]{64}$/);
  t.ok(safeEqual(a, a));
  t.notOk(safeEqual(a, a.slice(0, -1)));
  t.notOk(safeEqual(a, `${a}x`));
});
