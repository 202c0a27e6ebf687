import { randomBytes } from 'node:crypto';

// Each test file runs in a process of its own: give it queues and rate-limit counters of its own
// (a sub-prefix of the run's, which `npm test` cleans up), so the workers of files running in
// parallel never take each other's jobs. Processes a test starts inherit the file's prefix.
if (process.env.NODE_ENV === 'test' && process.env.QUEUE_PREFIX && !process.env.AGENTYARD_TEST_FILE_QUEUES) {
  process.env.QUEUE_PREFIX = `${process.env.QUEUE_PREFIX}-${randomBytes(4).toString('hex')}`;
  process.env.AGENTYARD_TEST_FILE_QUEUES = '1';
}
