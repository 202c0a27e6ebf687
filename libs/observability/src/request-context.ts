import { AsyncLocalStorage } from 'node:async_hooks';

/** The request a piece of work is done for; `job` when it is a queue job that request queued. */
interface WorkFor {
  requestId: string;
  job: boolean;
}

const current = new AsyncLocalStorage<WorkFor>();

/** The id of the request being served, or of the request that queued the job being processed. */
export const requestIdNow = (): string | undefined => current.getStore()?.requestId;

/** Runs `work` (and everything it starts) as serving request `requestId`. */
export function runForRequest<T>(requestId: string, work: () => T): T {
  return current.run({ requestId, job: false }, work);
}

/** Runs a job's processing for the request that queued it, where one did: its log lines then name it. */
export function runForJob<T>(requestId: string | undefined, work: () => T): T {
  return requestId ? current.run({ requestId, job: true }, work) : work();
}

/** What a log line adds: `reqId` inside a job (a request's own lines have it from Fastify already). */
export function requestLogFields(): { reqId?: string } {
  const work = current.getStore();
  return work?.job ? { reqId: work.requestId } : {};
}
