// The auth service's queue workers: security events and outbound email (worker.ts runs them as a
// process of their own; tests start the same workers in-process).
import { createSystemDb } from '@agentyard/db/system';
import { workerLog, type WorkerDeps, type Workers } from '@agentyard/http';
import { QUEUES, startJobWorkers, type AgentCrashLoopMailJob, type Worker } from '@agentyard/queue';
import type { AuthConfig } from './config.ts';
import { createMailer, type Mailer } from './domain/mailer.ts';
import type { EmailJob } from './domain/privileged/outbound-email.ts';
import type { SecurityEventJob } from './routes/privileged/security-events.ts';
import { authJobs } from './workers/jobs.ts';

export interface AuthWorkers extends Workers {
  securityEvents: Worker<SecurityEventJob>;
  email: Worker<EmailJob | AgentCrashLoopMailJob>;
}

export async function startWorkers(
  config: AuthConfig,
  deps: WorkerDeps & { mailer?: Mailer } = {},
): Promise<AuthWorkers> {
  const log = workerLog('auth-worker', config, deps);
  const db = deps.systemDb ?? createSystemDb(config.DATABASE_SYSTEM_URL, { max: 4 });
  const mailer =
    deps.mailer ??
    createMailer({ smtpUrl: config.SMTP_URL, from: config.EMAIL_FROM, timeoutMs: config.SMTP_TIMEOUT_MS });
  const jobs = startJobWorkers(authJobs({ db, mailer, config, log }), {
    redisUrl: config.REDIS_URL,
    prefix: config.QUEUE_PREFIX,
    log,
  });
  return {
    securityEvents: jobs.get(QUEUES.securityEvents),
    email: jobs.get(QUEUES.email),
    async close() {
      await jobs.close();
      if (!deps.mailer) mailer.close();
      if (!deps.systemDb) await db.destroy();
    },
  };
}
