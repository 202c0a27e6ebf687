import { SCHEDULED_TASK_PAUSED_MAIL_JOB, type ScheduledTaskPausedMailJob } from '@agentyard/proto-schemas';
import type { Queue } from '@agentyard/queue';

/** What the owner is told about their tasks, by mail through the outbound-email queue. */
export interface TaskNotices {
  /** These tasks paused themselves at the failure limit. */
  tasksPaused(taskIds: readonly string[]): Promise<void>;
}

/**
 * One mail job per paused task (the email worker reads the task and its owner; no address or
 * content in job data). Its id is the task's and the time, so each pause is told once.
 */
export function taskNotices(emailQueue: Queue): TaskNotices {
  return {
    async tasksPaused(taskIds) {
      const at = Date.now();
      await emailQueue.addBulk(
        taskIds.map((taskId) => ({
          name: SCHEDULED_TASK_PAUSED_MAIL_JOB,
          data: { kind: 'scheduled-task-paused', taskId } satisfies ScheduledTaskPausedMailJob,
          opts: {
            jobId: `task-paused-${taskId}-${at}`,
            attempts: 5,
            backoff: { type: 'exponential', delay: 5000 },
            removeOnComplete: { age: 3600 },
            removeOnFail: { age: 7 * 86_400 },
          },
        })),
      );
    },
  };
}
