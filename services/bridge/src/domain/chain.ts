import { createPublicClient, erc20Abi, formatUnits, http, type Address, type PublicClient } from 'viem';
import type { BridgeConfig } from '../config.ts';
import { BridgeErrors } from '../errors.ts';

const USDC_DECIMALS = 6;

export function createChainClient(config: BridgeConfig): PublicClient {
  return createPublicClient({
    transport: http(config.UNDERGROUND_RPC_URL, { timeout: config.RPC_TIMEOUT_MS, retryCount: 0 }),
  });
}

/** The USDC balance of `address` as an exact decimal string (ERC-20 balanceOf, 6 decimals). */
export async function usdcBalance(client: PublicClient, token: Address, address: Address): Promise<string> {
  let units: bigint;
  try {
    units = await client.readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [address] });
  } catch {
    throw BridgeErrors.chainUnavailable();
  }
  return formatUnits(units, USDC_DECIMALS);
}
