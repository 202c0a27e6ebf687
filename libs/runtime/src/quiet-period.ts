/** How the period is timed: the platform's timers, or a clock a test moves by hand. */
export interface QuietTimers {
  set(fire: () => void, ms: number): unknown;
  clear(timer: unknown): void;
}

const PLATFORM_TIMERS: QuietTimers = {
  set: (fire, ms) => setTimeout(fire, ms),
  clear: (timer) => clearTimeout(timer as NodeJS.Timeout),
};

/**
 * Tells background work on the engine (refilling warm containers) when no launch has run for
 * `quietMs`, so a burst of launches has the engine to itself: an engine on a few cores does one
 * container operation at a time, and a refill started between two claims delays the second.
 */
export function createQuietPeriod(quietMs: number, timers: QuietTimers = PLATFORM_TIMERS) {
  let active = 0;
  let timer: unknown;
  const waiters: (() => void)[] = [];
  const release = () => {
    timer = undefined;
    for (const resolve of waiters.splice(0)) resolve();
  };
  return {
    /** Runs a launch; the quiet period starts over when the last launch under way ends. */
    async during<T>(work: () => Promise<T>): Promise<T> {
      active++;
      if (timer !== undefined) timers.clear(timer);
      timer = undefined;
      try {
        return await work();
      } finally {
        if (--active === 0) timer = timers.set(release, quietMs);
      }
    },
    /** Resolves at once when quiet, else once no launch has run for `quietMs`. */
    whenQuiet(): Promise<void> {
      if (active === 0 && timer === undefined) return Promise.resolve();
      return new Promise((resolve) => waiters.push(resolve));
    },
  };
}

export type QuietPeriod = ReturnType<typeof createQuietPeriod>;
