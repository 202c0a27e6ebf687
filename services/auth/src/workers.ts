// The auth service's queue workers: security events and outbound email (worker.ts runs them as a
// process of their own; tests start the same workers in-process).
import { createSystemDb } from '@agentyard/db/system';
import { workerLog, type WorkerDeps, type Workers } from '@agentyard/http';
import { QUEUES, startWorker, UnrecoverableError, type Job, type Worker } from '@agentyard/queue';
import type { AuthConfig } from './config.ts';
import { EMAIL_VERIFICATION_MAIL_JOB, PASSWORD_RESET_MAIL_JOB, SECURITY_EVENT_JOB } from './domain/job-names.ts';
import { createMailer, type Mailer } from './domain/mailer.ts';
import { sendEmailVerificationMail, sendPasswordResetMail, type EmailJob, type EmailVerificationMailJob, type PasswordResetMailJob } from './domain/outbound-email-system.ts';
import { applySecurityEvent } from './domain/security-events-system.ts';
import type { SecurityEventJob } from './routes/security-events.ts';

export interface AuthWorkers extends Workers {
  securityEvents: Worker<SecurityEventJob>;
  email: Worker<EmailJob>;
}

export async function startWorkers(config: AuthConfig, deps: WorkerDeps & { mailer?: Mailer } = {}): Promise<AuthWorkers> {
  const log = workerLog('auth-worker', config, deps);
  const db = deps.systemDb ?? createSystemDb(config.DATABASE_SYSTEM_URL, { max: 4 });
  const mailer = deps.mailer ?? createMailer({ smtpUrl: config.SMTP_URL, from: config.EMAIL_FROM, timeoutMs: config.SMTP_TIMEOUT_MS });
  const options = { redisUrl: config.REDIS_URL, prefix: config.QUEUE_PREFIX, log };

  const securityEvents = startWorker<SecurityEventJob, Record<string, unknown> | null>(
    QUEUES.securityEvents,
    async (job: Job<SecurityEventJob>) => {
      if (job.name !== SECURITY_EVENT_JOB) throw new UnrecoverableError(`unknown security-events job ${job.name}`);
      const outcome = await applySecurityEvent(db, job.data.jti);
      log.info({ jobId: job.id, applied: outcome !== null }, 'security event processed');
      return outcome;
    },
    options,
  );

  const email = startWorker<EmailJob, string>(
    QUEUES.email,
    async (job: Job<EmailJob>) => {
      switch (job.name) {
        case PASSWORD_RESET_MAIL_JOB:
          return sendPasswordResetMail(db, mailer, { publicBaseUrl: config.PUBLIC_BASE_URL, ttlSeconds: config.PASSWORD_RESET_TTL_SECONDS }, (job.data as PasswordResetMailJob).requestId);
        case EMAIL_VERIFICATION_MAIL_JOB:
          return sendEmailVerificationMail(
            db,
            mailer,
            { publicBaseUrl: config.PUBLIC_BASE_URL, ttlSeconds: config.EMAIL_VERIFICATION_TTL_SECONDS },
            (job.data as EmailVerificationMailJob).verificationId,
          );
        default:
          throw new UnrecoverableError(`unknown email job ${job.name}`);
      }
    },
    options,
  );

  return {
    securityEvents,
    email,
    async close() {
      await Promise.all([securityEvents.close(), email.close()]);
      if (!deps.mailer) mailer.close();
      if (!deps.systemDb) await db.destroy();
    },
  };
}
