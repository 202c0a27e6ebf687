import { createServer } from 'node:net';
import { RuntimeError } from './driver.ts';

export interface PortRange {
  first: number;
  last: number;
}

/** Whether nothing on this host listens on `port` (any address): a listener of our own opens and closes there. */
export function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen({ port, host: '0.0.0.0', exclusive: true }, () => probe.close(() => resolve(true)));
  });
}

/**
 * Claims a host port in `range` without races: `claim(port)` records it where a unique constraint
 * guards it (the agents table) and answers false when another agent holds it, so two concurrent
 * claims can never both win. A port something else on the host listens on (another platform's
 * agents, any other process) is passed over. Candidates start at a random offset to keep collisions rare.
 */
export async function claimHostPort(
  range: PortRange,
  taken: ReadonlySet<number>,
  claim: (port: number) => Promise<boolean>,
  isFree: (port: number) => Promise<boolean> = portIsFree,
): Promise<number> {
  const size = range.last - range.first + 1;
  const offset = Math.floor(Math.random() * size);
  for (let i = 0; i < size; i++) {
    const port = range.first + ((offset + i) % size);
    if (taken.has(port)) continue;
    if (!(await isFree(port))) continue;
    if (await claim(port)) return port;
  }
  throw new RuntimeError(`no free host port in ${range.first}-${range.last}`);
}
