/**
 * The deliveries one worker process runs at once (10 by default), shared by every job it
 * is running (batches, retries, heartbeats): more worker processes, not more slots, scale it out.
 */
export interface DeliverySlots {
  run<T>(work: () => Promise<T>): Promise<T>;
  /**
   * `ready` (its agent reached, its run marked in flight) while the deliveries before it hold the
   * slots, then `send` in a slot of its own: at most `limit` deliveries wait ready beside the
   * `limit` sending, so a slot goes straight to a request instead of waiting for a database write.
   */
  readyThenRun<T>(ready: () => Promise<void>, send: () => Promise<T>): Promise<T>;
  readonly busy: number;
  readonly limit: number;
}

/** At most `limit` callers inside at once, in the order they came. */
function gate(limit: number) {
  let busy = 0;
  const waiting: (() => void)[] = [];
  const release = () => {
    const next = waiting.shift();
    if (next)
      next(); // the place passes straight to the next waiter
    else busy--;
  };
  return {
    async run<T>(work: () => Promise<T>): Promise<T> {
      if (busy < limit) busy++;
      else await new Promise<void>((resolve) => waiting.push(resolve));
      try {
        return await work();
      } finally {
        release();
      }
    },
    get busy() {
      return busy;
    },
  };
}

export function deliverySlots(limit: number): DeliverySlots {
  const slots = gate(limit);
  // Sending and ready ones together: a delivery keeps its place here until its slot's work is done.
  const window = gate(2 * limit);
  return {
    run: (work) => slots.run(work),
    readyThenRun: (ready, send) =>
      window.run(async () => {
        await ready();
        return slots.run(send);
      }),
    get busy() {
      return slots.busy;
    },
    limit,
  };
}
