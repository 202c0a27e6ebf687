// Preloaded (NODE_OPTIONS=--import) into every platform process of docker-compose.yml: settings whose
// value names a network role become this container's address on that network before config loads.
// A container on two networks must not listen on both (0.0.0.0): the agents' network and the edge's
// proxy network are `internal` (no default route), so the interface carrying the default route is the
// platform's own network and the one without it is the internal one.
//   @default-route-address  IPv4 address of the interface holding the default route
//   @internal-address       IPv4 address of the one interface without it
//   @internal-subnet        that interface's network (CIDR), e.g. the only peers a proxy network has
import { readFileSync } from 'node:fs';
import { networkInterfaces } from 'node:os';

/** The interface of the IPv4 default route (/proc/net/route: destination 00000000, mask 00000000). */
function defaultRouteInterface(): string | undefined {
  const rows = readFileSync('/proc/net/route', 'utf8').trim().split('\n').slice(1);
  return rows
    .map((row) => row.trim().split(/\s+/))
    .find((cols) => cols[1] === '00000000' && cols[7] === '00000000')?.[0];
}

function resolveRoles(): Record<string, string> {
  const withDefault = defaultRouteInterface();
  const ipv4 = Object.entries(networkInterfaces()).flatMap(([name, addresses]) =>
    (addresses ?? [])
      .filter((a) => a.family === 'IPv4' && !a.internal)
      .map((a) => ({ name, address: a.address, cidr: a.cidr ?? '' })),
  );
  const routed = ipv4.filter((a) => a.name === withDefault);
  const internal = ipv4.filter((a) => a.name !== withDefault);
  const roles: Record<string, string> = {};
  if (routed.length === 1) roles['@default-route-address'] = routed[0]!.address;
  if (internal.length === 1) {
    roles['@internal-address'] = internal[0]!.address;
    const [address, bits] = internal[0]!.cidr.split('/');
    roles['@internal-subnet'] = `${networkOf(address!, Number(bits))}/${bits}`;
  }
  return roles;
}

function networkOf(address: string, bits: number): string {
  const value = address.split('.').reduce((n, octet) => n * 256 + Number(octet), 0);
  const network = bits === 0 ? 0 : value - (value % 2 ** (32 - bits));
  return [24, 16, 8, 0].map((shift) => Math.floor(network / 2 ** shift) % 256).join('.');
}

const ROLE = /^@(default-route-address|internal-address|internal-subnet)$/;
const wanted = Object.entries(process.env).filter(([, value]) => ROLE.test(value ?? ''));
if (wanted.length > 0) {
  const roles = resolveRoles();
  for (const [key, role] of wanted) {
    const value = roles[role!];
    // Listening everywhere instead would put this listener on the agents' network: refuse to start.
    if (!value)
      throw new Error(
        `${key}=${role}: this container has no such network address (interfaces: ${JSON.stringify(networkInterfaces())})`,
      );
    process.env[key] = value;
  }
}
