/**
 * The deliveries one worker process runs at once (10 by default), shared by every job it
 * is running (batches, retries, heartbeats): more worker processes, not more slots, scale it out.
 */
export interface DeliverySlots {
  run<T>(work: () => Promise<T>): Promise<T>;
  readonly busy: number;
  readonly limit: number;
}

export function deliverySlots(limit: number): DeliverySlots {
  let busy = 0;
  const waiting: (() => void)[] = [];
  const release = () => {
    const next = waiting.shift();
    if (next)
      next(); // the slot passes straight to the next waiter
    else busy--;
  };
  return {
    async run(work) {
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
    limit,
  };
}
