import { RuntimeError } from './driver.ts';

export interface PortRange {
  first: number;
  last: number;
}

/**
 * Claims a host port in `range` without races: `claim(port)` records it where a unique constraint
 * guards it (the agents table) and answers false when another agent holds it, so two concurrent
 * claims can never both win. Candidates start at a random offset to keep collisions rare.
 */
export async function claimHostPort(range: PortRange, taken: ReadonlySet<number>, claim: (port: number) => Promise<boolean>): Promise<number> {
  const size = range.last - range.first + 1;
  const offset = Math.floor(Math.random() * size);
  for (let i = 0; i < size; i++) {
    const port = range.first + ((offset + i) % size);
    if (taken.has(port)) continue;
    if (await claim(port)) return port;
  }
  throw new RuntimeError(`no free host port in ${range.first}-${range.last}`);
}
