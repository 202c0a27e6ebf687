import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * AES-256-GCM with versioned keys, so keys can be rotated: ciphertexts name the key that sealed
 * them (`v1.<keyId>.<iv>.<tag>.<data>`), new data is sealed with the current key, and old data stays
 * readable while its key is still listed.
 */
export interface Keyring {
  readonly currentKeyId: string;
  encrypt(plaintext: string, context?: string): string;
  decrypt(sealed: string, context?: string): string;
  /** The id of the key a sealed value uses, to find values that need re-encrypting. */
  keyIdOf(sealed: string): string;
}

const FORMAT = 'v1';

/** Parses `id1:base64key,id2:base64key`; the first entry is the current key. */
export function parseKeyring(spec: string): Keyring {
  const entries = spec
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)
    .map((part) => {
      const at = part.indexOf(':');
      if (at <= 0) throw new Error('ENCRYPTION_KEYS entries look like <id>:<base64 32-byte key>');
      const id = part.slice(0, at);
      const key = Buffer.from(part.slice(at + 1), 'base64');
      if (key.length !== 32) throw new Error(`ENCRYPTION_KEYS key ${id} is not 32 bytes`);
      if (!/^[A-Za-z0-9_-]+$/.test(id))
        throw new Error(`ENCRYPTION_KEYS key id ${id} has characters other than letters, digits, _ and -`);
      return [id, key] as const;
    });
  if (entries.length === 0) throw new Error('ENCRYPTION_KEYS holds no key');
  return createKeyring(new Map(entries), entries[0]![0]);
}

export function createKeyring(keys: ReadonlyMap<string, Buffer>, currentKeyId: string): Keyring {
  const current = keys.get(currentKeyId);
  if (!current) throw new Error(`current key ${currentKeyId} is not in the keyring`);
  return {
    currentKeyId,
    encrypt(plaintext, context = '') {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', current, iv);
      cipher.setAAD(Buffer.from(context, 'utf8'));
      const data = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return [
        FORMAT,
        currentKeyId,
        iv.toString('base64url'),
        cipher.getAuthTag().toString('base64url'),
        data.toString('base64url'),
      ].join('.');
    },
    decrypt(sealed, context = '') {
      const [format, keyId, iv, tag, data] = sealed.split('.');
      if (format !== FORMAT || !keyId || iv === undefined || tag === undefined || data === undefined)
        throw new Error('not a sealed value');
      const key = keys.get(keyId);
      if (!key) throw new Error(`sealed with unknown key ${keyId}`);
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
      decipher.setAAD(Buffer.from(context, 'utf8'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
    },
    keyIdOf(sealed) {
      return sealed.split('.')[1] ?? '';
    },
  };
}
