export { randomToken, hashToken, safeEqual } from './tokens.ts';
export { createKeyring, parseKeyring, type Keyring } from './keyring.ts';
