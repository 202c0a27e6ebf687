// An agent's egress grant: the hosts its connected channels need, signed by the agents service and
// checked by the egress proxy (infra/egress-proxy/egress-proxy.ts imports this file: node:crypto only).
// It rides in the agent's proxy URL as Basic credentials, `http://<agentId>:<grant>@egress:3128`,
// which Node's proxy support (NODE_USE_ENV_PROXY) sends as Proxy-Authorization.
import { createHmac, timingSafeEqual } from 'node:crypto';

/** A host name as granted and as the proxy compares it: lower case, no trailing dot, no brackets. */
export const grantHost = (host: string) =>
  host
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '');

/** The agent id is in the MAC: one agent's grant does not open another's hosts. */
const macOf = (key: string, agentId: string, payload: string) =>
  createHmac('sha256', key).update(`egress-grant\0${agentId}\0${payload}`).digest();

/** `<hosts, base64url JSON>.<HMAC-SHA256, base64url>`: characters a URL's userinfo takes as they are. */
export function signEgressGrant(key: string, agentId: string, hosts: readonly string[]): string {
  const payload = Buffer.from(JSON.stringify([...new Set(hosts.map(grantHost))].sort())).toString('base64url');
  return `${payload}.${macOf(key, agentId, payload).toString('base64url')}`;
}

/** The hosts `grant` gives `agentId`, or null when it is not one the key signed for that agent. */
export function verifyEgressGrant(key: string, agentId: string, grant: string): string[] | null {
  const [payload, mac, extra] = grant.split('.');
  if (!payload || !mac || extra !== undefined) return null;
  const expected = macOf(key, agentId, payload);
  const given = Buffer.from(mac, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  try {
    const hosts: unknown = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    return Array.isArray(hosts) && hosts.every((h) => typeof h === 'string') ? hosts : null;
  } catch {
    return null;
  }
}

/** Whether `host` is a granted host or, for a granted `*.example.org`, one of its subdomains. */
export function hostGranted(granted: readonly string[], host: string): boolean {
  const name = grantHost(host);
  return granted.some((g) => (g.startsWith('*.') ? name.endsWith(g.slice(1)) : name === g));
}

/** The agent's proxy URL with its grant as credentials. */
export function grantedProxyUrl(proxyUrl: string, key: string, agentId: string, hosts: readonly string[]): string {
  const url = new URL(proxyUrl);
  url.username = agentId;
  url.password = signEgressGrant(key, agentId, hosts);
  return url.toString().replace(/\/$/, '');
}

/** The agent id and grant of a `Proxy-Authorization: Basic` header, or null. */
export function proxyCredentials(header: string | undefined): { agentId: string; grant: string } | null {
  const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header ?? '');
  if (!match) return null;
  const text = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = text.indexOf(':');
  return colon > 0 ? { agentId: text.slice(0, colon), grant: text.slice(colon + 1) } : null;
}
