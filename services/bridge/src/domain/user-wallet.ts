import { sql, type Database, type Kysely } from '@agentyard/db';
import { erc20Abi, formatUnits, getAddress, parseAbiItem, type Address, type PublicClient } from 'viem';
import { BridgeErrors } from '../errors.ts';

const USDC_DECIMALS = 6;
const NATIVE_DECIMALS = 18;
const TRANSFER = parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)');
/** The most transfers one read keeps (the routes' largest `limit`). */
export const MOST_TRANSFERS = 100;

export interface WalletTransferView {
  hash: string;
  blockNumber: number;
  from: string;
  to: string;
  direction: 'in' | 'out';
  token: 'USDC';
  amount: string;
}

export interface WalletRead {
  address: string;
  chainId: number;
  blockNumber: number;
  native: { symbol: string; balance: string; wei: string };
  usdc: { contract: string; balance: string; units: string };
  transfers: WalletTransferView[];
  fetchedAt: string;
}

export interface WalletChain {
  client: PublicClient;
  chainId: number;
  usdc: Address;
  nativeSymbol: string;
  /** How many blocks back transfers are looked for (an RPC node bounds a log query's range). */
  lookbackBlocks: number;
}

/** The wallet the user linked by wallet sign-in, read in their own transaction (null: none). */
export async function linkedWallet(
  db: Kysely<Database>,
  userId: string,
): Promise<{ address: string; linkedAt: string } | null> {
  const row = await db
    .selectFrom('provider_accounts')
    .select(['provider_subject', sql<Date>`created_at`.as('created_at')])
    .where('user_id', '=', userId)
    .where('provider', '=', 'wallet')
    .executeTakeFirst();
  return row ? { address: getAddress(row.provider_subject), linkedAt: row.created_at.toISOString() } : null;
}

/**
 * Balances (native and USDC) and the latest USDC transfers in and out of `address`, all read at one
 * block. Native transfers are not listed: a plain JSON-RPC node has no index of them (docs/wallet.md).
 */
export async function readWallet(chain: WalletChain, address: Address): Promise<WalletRead> {
  try {
    const block = await chain.client.getBlockNumber();
    const fromBlock = block > BigInt(chain.lookbackBlocks) ? block - BigInt(chain.lookbackBlocks) : 0n;
    const [wei, units, sent, received] = await Promise.all([
      chain.client.getBalance({ address, blockNumber: block }),
      chain.client.readContract({
        address: chain.usdc,
        abi: erc20Abi,
        functionName: 'balanceOf',
        args: [address],
        blockNumber: block,
      }),
      chain.client.getLogs({
        address: chain.usdc,
        event: TRANSFER,
        args: { from: address },
        fromBlock,
        toBlock: block,
      }),
      chain.client.getLogs({ address: chain.usdc, event: TRANSFER, args: { to: address }, fromBlock, toBlock: block }),
    ]);
    const seen = new Set<string>();
    const transfers = [...sent, ...received]
      .filter((log) => {
        // A transfer to oneself appears in both queries: listed once.
        const key = `${log.transactionHash}:${log.logIndex}`;
        if (seen.has(key)) return false;
        seen.add(key);
        return true;
      })
      .sort((a, b) => Number(b.blockNumber - a.blockNumber) || (b.logIndex ?? 0) - (a.logIndex ?? 0))
      .slice(0, MOST_TRANSFERS)
      .map((log) => ({
        hash: log.transactionHash!,
        blockNumber: Number(log.blockNumber),
        from: getAddress(log.args.from!),
        to: getAddress(log.args.to!),
        direction: getAddress(log.args.from!) === address ? ('out' as const) : ('in' as const),
        token: 'USDC' as const,
        amount: formatUnits(log.args.value!, USDC_DECIMALS),
      }));
    return {
      address,
      chainId: chain.chainId,
      blockNumber: Number(block),
      native: { symbol: chain.nativeSymbol, balance: formatUnits(wei, NATIVE_DECIMALS), wei: wei.toString() },
      usdc: { contract: getAddress(chain.usdc), balance: formatUnits(units, USDC_DECIMALS), units: units.toString() },
      transfers,
      fetchedAt: new Date().toISOString(),
    };
  } catch {
    throw BridgeErrors.chainUnavailable();
  }
}

/** Reads of the chain kept for a few seconds, so a page that asks for a wallet and its transfers costs one read. */
export class WalletReadCache {
  private readonly entries = new Map<string, { until: number; read: Promise<WalletRead> }>();
  private readonly ttlMs: number;
  private readonly most: number;

  constructor(ttlMs: number, most = 1000) {
    this.ttlMs = ttlMs;
    this.most = most;
  }

  get(address: Address, read: () => Promise<WalletRead>, now = Date.now()): Promise<WalletRead> {
    const cached = this.entries.get(address);
    if (cached && cached.until > now) return cached.read;
    if (this.entries.size >= this.most) this.entries.delete(this.entries.keys().next().value!);
    const pending = read();
    this.entries.set(address, { until: now + this.ttlMs, read: pending });
    // A failed read is not kept: the next request asks the chain again.
    pending.catch(() => {
      if (this.entries.get(address)?.read === pending) this.entries.delete(address);
    });
    return pending;
  }
}
