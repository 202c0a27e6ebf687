import { createPublicClient, erc20Abi, http, type Address, type PublicClient } from 'viem';
import type { AuthConfig } from '../config.ts';
import { SignInErrors } from '../errors.ts';

/** The chain wallets sign in on and tokens gate on (Base by default), read over JSON-RPC with a timeout. */
export function createChainClient(config: AuthConfig): PublicClient {
  return createPublicClient({
    transport: http(config.BASE_RPC_URL, { timeout: config.RPC_TIMEOUT_MS, retryCount: 1 }),
  });
}

export interface TokenGate {
  token: Address;
  minimum: bigint;
  chainId: number;
}

export function tokenGateOf(config: AuthConfig): TokenGate | null {
  if (!config.TOKEN_GATE_TOKEN_ADDRESS) return null;
  return {
    token: config.TOKEN_GATE_TOKEN_ADDRESS as Address,
    minimum: BigInt(config.TOKEN_GATE_MIN_BALANCE),
    chainId: config.BASE_CHAIN_ID,
  };
}

/** The wallet's balance of the gating token when it reaches the minimum; 403 when it does not. */
export async function checkTokenGate(client: PublicClient, gate: TokenGate | null, wallet: Address) {
  if (!gate) throw SignInErrors.tokenGateNotConfigured();
  let balance: bigint;
  try {
    balance = await client.readContract({
      address: gate.token,
      abi: erc20Abi,
      functionName: 'balanceOf',
      args: [wallet],
    });
  } catch {
    throw SignInErrors.chainUnavailable();
  }
  if (balance < gate.minimum) throw SignInErrors.insufficientBalance(balance, gate.minimum);
  return {
    eligible: true as const,
    address: wallet,
    token: gate.token,
    chainId: gate.chainId,
    balance: balance.toString(),
    minimum: gate.minimum.toString(),
  };
}
