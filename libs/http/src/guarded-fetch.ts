import { lookup, type LookupAddress } from 'node:dns';
import ipaddr from 'ipaddr.js';
import { Agent, fetch } from 'undici';

/**
 * Outbound fetches of URLs a user names (a page to summarize): only http(s), only public
 * addresses, every redirect judged again, with a deadline and a size cap. The address checked is
 * the address dialled: names are resolved inside the connection's own lookup, so a DNS answer
 * that changes between a check and the connect (rebinding) cannot slip a private address in.
 */

/** True when `raw` is a public unicast address: loopback, private, link-local (cloud metadata), unique-local, CGNAT, multicast, reserved and unspecified are not; IPv4-mapped IPv6 is judged as the IPv4 it carries. */
export function isPublicAddress(raw: string): boolean {
  if (!ipaddr.isValid(raw)) return false;
  let address = ipaddr.parse(raw);
  if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress())
    address = (address as ipaddr.IPv6).toIPv4Address();
  return address.range() === 'unicast';
}

/** Why a fetch was refused or failed; `reason` is for logs and tests, `message` is the caller's to read. */
export type FetchRefusal = 'scheme' | 'address' | 'redirects' | 'status' | 'type' | 'size' | 'timeout' | 'unreachable';

export class GuardedFetchError extends Error {
  override name = 'GuardedFetchError';
  readonly reason: FetchRefusal;
  constructor(reason: FetchRefusal, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.reason = reason;
  }
}

export interface GuardedFetchOptions {
  /** Deadline of the whole fetch, redirects and body included. */
  timeoutMs: number;
  /** The most bytes of body read; a longer page is refused. */
  maxBytes: number;
  maxRedirects: number;
  /** Content types (without parameters) accepted; anything else is refused. */
  contentTypes: readonly string[];
  /**
   * Host names that resolve to loopback and are let through there: local test servers. Empty in
   * production (the services' config refuses any outside development and test); a literal
   * loopback address, `localhost` or any other name resolving to a private address stays refused.
   */
  loopbackTestHosts?: ReadonlySet<string>;
}

export interface FetchedDocument {
  /** The URL the document was read from, after redirects. */
  url: string;
  contentType: string;
  body: string;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const hostOf = (url: URL) => url.hostname.replace(/^\[|\]$/g, '').toLowerCase();

/** A dispatcher that dials only addresses `isPublicAddress` accepts (and loopback for the named test hosts). */
function guardedAgent(timeoutMs: number, testHosts: ReadonlySet<string>): Agent {
  return new Agent({
    connect: {
      timeout: timeoutMs,
      lookup(hostname, options, callback) {
        const name = hostname.toLowerCase();
        const all = (options as { all?: boolean }).all;
        if (testHosts.has(name)) {
          if (all)
            return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, [
              { address: '127.0.0.1', family: 4 },
            ]);
          return callback(null, '127.0.0.1', 4);
        }
        lookup(hostname, { all: true }, (error, addresses: LookupAddress[]) => {
          if (error) return callback(error, '', 0);
          if (addresses.length === 0 || addresses.some((a) => !isPublicAddress(a.address)))
            return callback(new GuardedFetchError('address', `${hostname} resolves to a private address`), '', 0);
          if (all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
          callback(null, addresses[0]!.address, addresses[0]!.family);
        });
      },
    },
  });
}

/** Refuses a URL before any connection: its scheme, and a literal address (literals never reach the lookup). */
function checkTarget(url: URL, testHosts: ReadonlySet<string>): void {
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new GuardedFetchError('scheme', 'Only http and https URLs can be fetched');
  if (url.username || url.password) throw new GuardedFetchError('scheme', 'URLs with credentials are not fetched');
  const host = hostOf(url);
  if (testHosts.has(host)) return;
  if (ipaddr.isValid(host) && !isPublicAddress(host))
    throw new GuardedFetchError('address', `${host} is a private address`);
}

/** Reads at most `maxBytes` of a body, refusing (and dropping the connection) beyond. */
async function readCapped(body: ReadableStream<Uint8Array> | null, maxBytes: number): Promise<Buffer> {
  if (!body) return Buffer.alloc(0);
  const chunks: Buffer[] = [];
  let size = 0;
  const reader = body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => {});
      throw new GuardedFetchError('size', `The page is larger than ${Math.round(maxBytes / 1024)} KiB`);
    }
    chunks.push(Buffer.from(value));
  }
  return Buffer.concat(chunks);
}

const causeOf = (error: unknown): unknown => {
  let cause = error;
  for (let depth = 0; depth < 5 && cause; depth++) {
    if (cause instanceof GuardedFetchError) return cause;
    cause = (cause as { cause?: unknown }).cause;
  }
  return error;
};

/**
 * Fetches a document a user named, following at most `maxRedirects` redirects, each judged as the
 * first URL was. Throws `GuardedFetchError` for every refusal and failure.
 */
export async function guardedFetch(rawUrl: string, options: GuardedFetchOptions): Promise<FetchedDocument> {
  const testHosts = options.loopbackTestHosts ?? new Set<string>();
  const agent = guardedAgent(options.timeoutMs, testHosts);
  const signal = AbortSignal.timeout(options.timeoutMs);
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    throw new GuardedFetchError('scheme', 'Not a valid URL');
  }
  try {
    for (let hop = 0; ; hop++) {
      checkTarget(url, testHosts);
      const response = await fetch(url, {
        redirect: 'manual',
        dispatcher: agent,
        signal,
        headers: { accept: 'text/html,application/xhtml+xml;q=0.9', 'user-agent': 'Agentyard-PageReader/1.0' },
      });
      if (REDIRECTS.has(response.status)) {
        await response.body?.cancel().catch(() => {});
        const location = response.headers.get('location');
        if (!location) throw new GuardedFetchError('status', 'The page redirected without a location');
        if (hop >= options.maxRedirects)
          throw new GuardedFetchError('redirects', `The page redirected more than ${options.maxRedirects} times`);
        url = new URL(location, url);
        continue;
      }
      if (!response.ok) {
        await response.body?.cancel().catch(() => {});
        throw new GuardedFetchError('status', `The page answered ${response.status}`);
      }
      const contentType = (response.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
      if (!options.contentTypes.includes(contentType)) {
        await response.body?.cancel().catch(() => {});
        throw new GuardedFetchError('type', `The page is ${contentType || 'of no declared type'}, not HTML`);
      }
      const declared = Number(response.headers.get('content-length') ?? Number.NaN);
      if (declared > options.maxBytes) {
        await response.body?.cancel().catch(() => {});
        throw new GuardedFetchError('size', `The page is larger than ${Math.round(options.maxBytes / 1024)} KiB`);
      }
      const body = await readCapped(response.body as ReadableStream<Uint8Array> | null, options.maxBytes);
      return { url: url.toString(), contentType, body: new TextDecoder('utf-8').decode(body) };
    }
  } catch (error) {
    const cause = causeOf(error);
    if (cause instanceof GuardedFetchError) throw cause;
    if (signal.aborted)
      throw new GuardedFetchError('timeout', `The page did not answer within ${options.timeoutMs / 1000} s`, {
        cause: error,
      });
    throw new GuardedFetchError('unreachable', 'The page could not be reached', { cause: error });
  } finally {
    agent.close().catch(() => {});
  }
}
