import type { UserTx } from '@agentyard/db';
import type { Keyring } from '@agentyard/crypto';
import { getAddress, type Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { BridgeErrors } from '../errors.ts';
import { requireOwnAgent } from './agent-ownership.ts';

/** Binds a sealed key to its address, so a sealed value moved to another row does not decrypt. */
export const walletKeyContext = (address: string) => `underground-wallet:${address}`;

/** A new wallet for one of the user's agents; the private key is sealed before it is stored and never returned. */
export async function createWallet(trx: UserTx, keyring: Keyring, userId: string, agentId: string) {
  await requireOwnAgent(trx, agentId);
  const privateKey = generatePrivateKey();
  const { address } = privateKeyToAccount(privateKey);
  await trx
    .insertInto('underground_wallets')
    .values({
      address,
      user_id: userId,
      agent_id: agentId,
      private_key_sealed: keyring.encrypt(privateKey, walletKeyContext(address)),
    })
    .execute();
  return { address, agentId };
}

/** `raw` in checksum form; a mixed-case address with a wrong checksum is a client mistake. */
export function checksumAddress(raw: string): Address {
  try {
    return getAddress(raw);
  } catch {
    throw BridgeErrors.invalidAddress();
  }
}

export async function requireOwnWallet(trx: UserTx, address: Address): Promise<void> {
  const wallet = await trx
    .selectFrom('underground_wallets')
    .select('address')
    .where('address', '=', address)
    .executeTakeFirst();
  if (!wallet) throw BridgeErrors.walletNotFound();
}
