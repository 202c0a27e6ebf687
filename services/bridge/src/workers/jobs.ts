import { defineJobs, QUEUES } from '@agentyard/queue';
import { DELIVER_JOB, type busDeliveryProcessor } from '../domain/privileged/bus-delivery.ts';

/** Every job the bridge's workers run. */
export function bridgeJobs(delivery: ReturnType<typeof busDeliveryProcessor>) {
  return defineJobs({
    [DELIVER_JOB]: { queue: QUEUES.busDelivery, run: delivery.process },
  });
}
