import { lookup, type LookupAddress } from 'node:dns';
import ipaddr from 'ipaddr.js';
import { Agent } from 'undici';
import { isPublicAddress } from '@agentyard/http';

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** Parses `10.0.0.0/8,127.0.0.1,::1`: addresses and CIDRs an operator lets webhooks reach. */
export function parseAllowList(spec: string): Range[] {
  return spec
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean)
    .map((entry) => {
      if (entry.includes('/')) return ipaddr.parseCIDR(entry);
      const address = ipaddr.parse(entry);
      return [address, address.kind() === 'ipv4' ? 32 : 128] as Range;
    });
}

/** True when `raw` is a public unicast address (`isPublicAddress`), or allow-listed. */
export function isDeliverableAddress(raw: string, allowList: readonly Range[]): boolean {
  if (!ipaddr.isValid(raw)) return false;
  let address = ipaddr.parse(raw);
  if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress())
    address = (address as ipaddr.IPv6).toIPv4Address();
  if (allowList.some(([net, bits]) => net.kind() === address.kind() && address.match(net, bits))) return true;
  return isPublicAddress(raw);
}

export class BlockedAddressError extends Error {
  override name = 'BlockedAddressError';
}

/**
 * An HTTP dispatcher whose every connection goes only to vetted addresses: names are resolved and
 * checked at connect time (the address checked is the address dialled, so DNS rebinding cannot
 * slip a private address in between).
 */
export function guardedDispatcher(allowList: readonly Range[], timeoutMs: number): Agent {
  return new Agent({
    connect: {
      timeout: timeoutMs,
      lookup(hostname, options, callback) {
        lookup(hostname, { all: true }, (error, addresses: LookupAddress[]) => {
          if (error) return callback(error, '', 0);
          const blocked = addresses.find((a) => !isDeliverableAddress(a.address, allowList));
          if (blocked || addresses.length === 0)
            return callback(new BlockedAddressError(`${hostname} resolves to a refused address`), '', 0);
          if ((options as { all?: boolean }).all)
            return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
          callback(null, addresses[0]!.address, addresses[0]!.family);
        });
      },
    },
  });
}

/** Literal IP hosts never reach `lookup`, so they are checked up front. */
export function checkLiteralHost(url: URL, allowList: readonly Range[]): void {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (ipaddr.isValid(host) && !isDeliverableAddress(host, allowList))
    throw new BlockedAddressError(`${host} is a refused address`);
}
