import t from 'tap';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { Writable } from 'node:stream';
import pino from 'pino';
import { createQueues, QUEUES, startWorker, type Job } from '@agentyard/queue';
import { createServer, loggerOptions } from '../src/index.ts';

// A job queued while a request is served carries the request's id, and the worker's log lines
// about that job name it: an operator follows one request from the edge into the queue's work.
t.test("a job queued by a request carries its id into the worker's log lines", async (t) => {
  const prefix = `${process.env.QUEUE_PREFIX}-reqid-${randomBytes(3).toString('hex')}`;
  const queues = createQueues({ redisUrl: process.env.REDIS_URL!, prefix });
  t.teardown(() => queues.close());
  const app = createServer({ name: 'queueing', logLevel: 'silent' });
  app.post('/work', async (request) => {
    const job = await queues.get(QUEUES.email).add('note', { ref: 'row-1' }, { attempts: 1 });
    return { jobId: job.id, requestId: request.id };
  });
  t.teardown(() => app.close());

  const lines: Record<string, unknown>[] = [];
  const log = pino(
    loggerOptions('worker', 'info'),
    new Writable({
      write(chunk, _encoding, done) {
        lines.push(JSON.parse(String(chunk)));
        done();
      },
    }),
  );
  const worker = startWorker(
    QUEUES.email,
    async (job) => {
      log.info({ jobId: job.id }, 'working on it');
      throw new Error('refused on purpose');
    },
    { redisUrl: process.env.REDIS_URL!, prefix, log },
  );
  t.teardown(() => worker.close());
  // Registered after startWorker's own listener, so its 'job failed' line is written by then.
  const failed = once(worker, 'failed') as Promise<[Job]>;

  const requestId = `req-${randomBytes(6).toString('hex')}`;
  const res = await app.inject({ method: 'POST', url: '/work', headers: { 'x-request-id': requestId } });
  t.equal(res.json().requestId, requestId);
  const [job] = await failed;
  t.same(job.data, { ref: 'row-1', queuedBy: requestId }, 'the job names the request that queued it');
  t.match(
    lines.find((l) => l.msg === 'working on it'),
    { reqId: requestId },
    'a line the processor writes names it',
  );
  t.match(
    lines.find((l) => l.msg === 'job failed'),
    { reqId: requestId, jobId: job.id },
    "so does the worker's own line about it",
  );

  const outside = await queues.get(QUEUES.email).add('note', { ref: 'row-2' }, { attempts: 1 });
  t.same(outside.data, { ref: 'row-2' }, 'a job queued outside any request carries nothing');
});
