/**
 * Runs at most `size` launches at once, in arrival order. A container engine on a few cores does
 * not launch more containers per second when asked for more at once; it only finishes them all
 * later. Taking them in turn lets the first ones start first, at the same total throughput.
 */
export function createLaunchSlots(size: number) {
  let active = 0;
  const waiting: (() => void)[] = [];
  return async function launch<T>(work: () => Promise<T>): Promise<T> {
    if (active < size) active++;
    else await new Promise<void>((resolve) => waiting.push(resolve));
    try {
      return await work();
    } finally {
      // The slot passes straight to the next in line, so a later arrival cannot overtake it.
      const next = waiting.shift();
      if (next) next();
      else active--;
    }
  };
}

export type LaunchSlots = ReturnType<typeof createLaunchSlots>;
