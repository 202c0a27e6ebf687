import { randomBytes } from 'node:crypto';
import { getAddress, isAddressEqual, type Address, type Hex, type PublicClient } from 'viem';
import { parseSiweMessage } from 'viem/siwe';
import type { AppDb } from '@agentyard/db';
import { SignInErrors } from '../errors.ts';
import { WALLET_EMAIL_DOMAIN } from './email-verification.ts';
import type { ExternalIdentity } from './external-sign-in.ts';

/** Users made by wallet sign-in get this derived email (`<address>@wallet.<service>`). */
export const walletEmail = (address: string) => `${address.toLowerCase()}${WALLET_EMAIL_DOMAIN}`;

/** How far a message's issuedAt may lie ahead of our clock (wallet clocks drift). */
export const ISSUED_AT_SKEW_MS = 60_000;
/** How old a message may be: a signature lying around longer is not a sign-in in progress. */
export const ISSUED_AT_MAX_AGE_MS = 10 * 60_000;

/** A single-use nonce for a sign-in message, remembered until it expires. */
export async function issueNonce(db: AppDb, ttlSeconds: number): Promise<{ nonce: string; expiresAt: string }> {
  const nonce = randomBytes(16).toString('hex');
  const expiresAt = new Date(Date.now() + ttlSeconds * 1000);
  await db
    .deleteFrom('auth_nonces')
    .where('expires_at', '<', new Date(Date.now() - 3600_000))
    .execute();
  await db.insertInto('auth_nonces').values({ nonce, expires_at: expiresAt }).execute();
  return { nonce, expiresAt: expiresAt.toISOString() };
}

/** Uses up a nonce we issued; false when unknown, used or expired. */
async function consumeNonce(db: AppDb, nonce: string): Promise<boolean> {
  const row = await db
    .updateTable('auth_nonces')
    .set({ used_at: new Date() })
    .where('nonce', '=', nonce)
    .where('used_at', 'is', null)
    .where('expires_at', '>', new Date())
    .returning('nonce')
    .executeTakeFirst();
  return !!row;
}

export interface WalletSignInRequest {
  address: string;
  message: string;
  signature: string;
}

/** What a sign-in message must name: our domain and origin (`uri`), our chain. */
export interface SiweExpectations {
  domain: string;
  origin: string;
  chainId: number;
}

/**
 * Checks a Sign-In With Ethereum message (domain, origin, chain, address, times, our nonce), then its
 * signature on the chain, which covers plain accounts, deployed smart wallets (ERC-1271) and
 * smart wallets not deployed yet (ERC-6492). The wallet's identity on success.
 */
export async function verifyWalletSignIn(
  db: AppDb,
  client: PublicClient,
  expected: SiweExpectations,
  input: WalletSignInRequest,
): Promise<ExternalIdentity & { address: Address }> {
  const message = parseSiweMessage(input.message);
  if (!message.address || !message.domain || !message.nonce || !message.uri || !message.version || !message.chainId)
    throw SignInErrors.invalidSignInMessage('not a Sign-In With Ethereum message');
  if (message.domain !== expected.domain) throw SignInErrors.invalidSignInMessage('wrong domain');
  if (originOf(message.uri) !== expected.origin) throw SignInErrors.invalidSignInMessage('wrong uri');
  if (message.chainId !== expected.chainId) throw SignInErrors.invalidSignInMessage('wrong chain');
  if (!isAddressEqual(message.address, input.address as Address))
    throw SignInErrors.invalidSignInMessage('address does not match');
  const now = Date.now();
  if (message.expirationTime && message.expirationTime.getTime() <= now)
    throw SignInErrors.invalidSignInMessage('expired');
  if (message.notBefore && message.notBefore.getTime() > now) throw SignInErrors.invalidSignInMessage('not yet valid');
  const issuedAt = message.issuedAt?.getTime();
  if (issuedAt === undefined || Number.isNaN(issuedAt)) throw SignInErrors.invalidSignInMessage('no issuedAt');
  if (issuedAt > now + ISSUED_AT_SKEW_MS) throw SignInErrors.invalidSignInMessage('issued in the future');
  if (issuedAt < now - ISSUED_AT_MAX_AGE_MS) throw SignInErrors.invalidSignInMessage('issued too long ago');
  // Spent before the signature is checked, so a nonce never serves two attempts.
  if (!(await consumeNonce(db, message.nonce))) throw SignInErrors.invalidNonce();
  let valid: boolean;
  try {
    valid = await client.verifyMessage({
      address: message.address,
      message: input.message,
      signature: input.signature as Hex,
    });
  } catch (error) {
    const name = (error as Error).name;
    if (name === 'HttpRequestError' || name === 'TimeoutError' || name === 'RpcRequestError')
      throw SignInErrors.chainUnavailable();
    valid = false;
  }
  if (!valid) throw SignInErrors.invalidWalletSignature();
  const address = getAddress(message.address);
  return {
    provider: 'wallet',
    subject: address.toLowerCase(),
    email: walletEmail(address),
    emailVerified: false,
    name: address,
    address,
  };
}

function originOf(uri: string): string | null {
  try {
    return new URL(uri).origin;
  } catch {
    return null;
  }
}
