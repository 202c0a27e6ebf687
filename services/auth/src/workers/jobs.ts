import type { SystemDb } from '@agentyard/db/system';
import { AGENT_CRASH_LOOP_MAIL_JOB, defineJobs, QUEUES, type AgentCrashLoopMailJob, type Job } from '@agentyard/queue';
import { SCHEDULED_TASK_PAUSED_MAIL_JOB, type ScheduledTaskPausedMailJob } from '@agentyard/proto-schemas';
import type { AuthConfig } from '../config.ts';
import { EMAIL_VERIFICATION_MAIL_JOB, PASSWORD_RESET_MAIL_JOB, SECURITY_EVENT_JOB } from '../domain/job-names.ts';
import type { Mailer } from '../domain/mailer.ts';
import {
  sendAgentCrashLoopMail,
  sendEmailVerificationMail,
  sendPasswordResetMail,
  type EmailVerificationMailJob,
  type PasswordResetMailJob,
} from '../domain/privileged/outbound-email.ts';
import { sendScheduledTaskPausedMail } from '../domain/privileged/scheduled-task-mail.ts';
import { applySecurityEvent } from '../domain/privileged/security-events.ts';
import type { SecurityEventJob } from '../routes/privileged/security-events.ts';

export interface AuthJobsContext {
  db: SystemDb;
  mailer: Mailer;
  config: AuthConfig;
  log: { info(obj: object, msg: string): void };
}

/** Every job the auth service's workers run: security events, and the outbound email of every service. */
export function authJobs({ db, mailer, config, log }: AuthJobsContext) {
  return defineJobs({
    [SECURITY_EVENT_JOB]: {
      queue: QUEUES.securityEvents,
      run: async (job: Job<SecurityEventJob>) => {
        const outcome = await applySecurityEvent(db, job.data.jti);
        log.info({ jobId: job.id, applied: outcome !== null }, 'security event processed');
        return outcome;
      },
    },
    [PASSWORD_RESET_MAIL_JOB]: {
      queue: QUEUES.email,
      run: (job: Job<PasswordResetMailJob>) =>
        sendPasswordResetMail(
          db,
          mailer,
          { publicBaseUrl: config.PUBLIC_BASE_URL, ttlSeconds: config.PASSWORD_RESET_TTL_SECONDS },
          job.data.requestId,
        ),
    },
    [EMAIL_VERIFICATION_MAIL_JOB]: {
      queue: QUEUES.email,
      run: (job: Job<EmailVerificationMailJob>) =>
        sendEmailVerificationMail(
          db,
          mailer,
          { publicBaseUrl: config.PUBLIC_BASE_URL, ttlSeconds: config.EMAIL_VERIFICATION_TTL_SECONDS },
          job.data.verificationId,
        ),
    },
    // Queued by the scheduler's worker.
    [SCHEDULED_TASK_PAUSED_MAIL_JOB]: {
      queue: QUEUES.email,
      run: (job: Job<ScheduledTaskPausedMailJob>) =>
        sendScheduledTaskPausedMail(db, mailer, { publicBaseUrl: config.PUBLIC_BASE_URL }, job.data.taskId),
    },
    // Queued by the agents worker's watchdog.
    [AGENT_CRASH_LOOP_MAIL_JOB]: {
      queue: QUEUES.email,
      run: (job: Job<AgentCrashLoopMailJob>) =>
        sendAgentCrashLoopMail(db, mailer, { publicBaseUrl: config.PUBLIC_BASE_URL }, job.data.eventId),
    },
  });
}
