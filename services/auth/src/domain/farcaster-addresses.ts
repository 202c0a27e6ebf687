import { createPublicClient, http, isAddress, isAddressEqual, parseAbi, type Address, type PublicClient } from 'viem';
import { fetchWithTimeout } from '@agentyard/http';
import { SignInErrors } from '../errors.ts';

/** Farcaster's IdRegistry (Optimism): the custody address of each fid. */
const ID_REGISTRY_ABI = parseAbi(['function custodyOf(uint256 fid) view returns (address)']);

export interface FarcasterAddressSettings {
  rpcUrl: string;
  idRegistry: Address;
  /** A hub's HTTP API: the fid's verified addresses count too when set. */
  hubUrl: string | undefined;
  timeoutMs: number;
}

interface HubVerifications {
  messages?: { data?: { verificationAddAddressBody?: { address?: unknown } } }[];
}

/**
 * The addresses bound to a farcaster id: its custody address (IdRegistry, on chain) and, with a
 * hub configured, the Ethereum addresses it verified. A token gate checks only those, so nobody
 * passes it with someone else's wallet.
 */
export class FarcasterAddresses {
  #chain: PublicClient;
  #settings: FarcasterAddressSettings;

  constructor(settings: FarcasterAddressSettings) {
    this.#settings = settings;
    this.#chain = createPublicClient({
      transport: http(settings.rpcUrl, { timeout: settings.timeoutMs, retryCount: 1 }),
    });
  }

  async isBound(fid: number, address: Address): Promise<boolean> {
    let custody: Address;
    try {
      custody = await this.#chain.readContract({
        address: this.#settings.idRegistry,
        abi: ID_REGISTRY_ABI,
        functionName: 'custodyOf',
        args: [BigInt(fid)],
      });
    } catch {
      throw SignInErrors.chainUnavailable();
    }
    if (isAddressEqual(custody, address)) return true;
    if (!this.#settings.hubUrl) return false;
    return (await this.#verifiedAddresses(fid)).some((verified) => isAddressEqual(verified, address));
  }

  async #verifiedAddresses(fid: number): Promise<Address[]> {
    const url = new URL('/v1/verificationsByFid', this.#settings.hubUrl);
    url.searchParams.set('fid', String(fid));
    let body: HubVerifications;
    try {
      const response = await fetchWithTimeout(url, {
        timeoutMs: this.#settings.timeoutMs,
        headers: { accept: 'application/json' },
      });
      if (!response.ok) throw new Error(`hub answered ${response.status}`);
      body = (await response.json()) as HubVerifications;
    } catch {
      throw SignInErrors.farcasterHubUnavailable();
    }
    return (body.messages ?? [])
      .map((m) => m.data?.verificationAddAddressBody?.address)
      .filter((a): a is Address => typeof a === 'string' && isAddress(a));
  }
}
