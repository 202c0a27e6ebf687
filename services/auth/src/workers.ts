// The auth service's queue workers: security events and outbound email (worker.ts runs them as a
// process of their own; tests start the same workers in-process).
import { createSystemDb } from '@agentyard/db/system';
import { workerLog, type WorkerDeps, type Workers } from '@agentyard/http';
import {
  AGENT_CRASH_LOOP_MAIL_JOB,
  QUEUES,
  startWorker,
  UnrecoverableError,
  type AgentCrashLoopMailJob,
  type Job,
  type Worker,
} from '@agentyard/queue';
import { SCHEDULED_TASK_PAUSED_MAIL_JOB, type ScheduledTaskPausedMailJob } from '@agentyard/proto-schemas';
import type { AuthConfig } from './config.ts';
import { EMAIL_VERIFICATION_MAIL_JOB, PASSWORD_RESET_MAIL_JOB, SECURITY_EVENT_JOB } from './domain/job-names.ts';
import { createMailer, type Mailer } from './domain/mailer.ts';
import {
  sendAgentCrashLoopMail,
  sendEmailVerificationMail,
  sendPasswordResetMail,
  type EmailJob,
  type EmailVerificationMailJob,
  type PasswordResetMailJob,
} from './domain/privileged/outbound-email.ts';
import { sendScheduledTaskPausedMail } from './domain/privileged/scheduled-task-mail.ts';
import { applySecurityEvent } from './domain/privileged/security-events.ts';
import type { SecurityEventJob } from './routes/privileged/security-events.ts';

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

  const email = startWorker<EmailJob | AgentCrashLoopMailJob, string>(
    QUEUES.email,
    async (job: Job<EmailJob | AgentCrashLoopMailJob>) => {
      switch (job.name) {
        case PASSWORD_RESET_MAIL_JOB:
          return sendPasswordResetMail(
            db,
            mailer,
            { publicBaseUrl: config.PUBLIC_BASE_URL, ttlSeconds: config.PASSWORD_RESET_TTL_SECONDS },
            (job.data as PasswordResetMailJob).requestId,
          );
        case EMAIL_VERIFICATION_MAIL_JOB:
          return sendEmailVerificationMail(
            db,
            mailer,
            { publicBaseUrl: config.PUBLIC_BASE_URL, ttlSeconds: config.EMAIL_VERIFICATION_TTL_SECONDS },
            (job.data as EmailVerificationMailJob).verificationId,
          );
        case SCHEDULED_TASK_PAUSED_MAIL_JOB: // queued by the scheduler's worker
          return sendScheduledTaskPausedMail(
            db,
            mailer,
            { publicBaseUrl: config.PUBLIC_BASE_URL },
            (job.data as unknown as ScheduledTaskPausedMailJob).taskId,
          );
        case AGENT_CRASH_LOOP_MAIL_JOB:
          return sendAgentCrashLoopMail(
            db,
            mailer,
            { publicBaseUrl: config.PUBLIC_BASE_URL },
            (job.data as AgentCrashLoopMailJob).eventId,
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
