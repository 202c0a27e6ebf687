import t from 'tap';
import { randomBytes, randomUUID } from 'node:crypto';
import { createUserRow, startMailServer, systemDb, unfold } from '@agentyard/testing';
import { createQueues, QUEUES } from '@agentyard/queue';
import { SCHEDULED_TASK_PAUSED_MAIL_JOB } from '@agentyard/proto-schemas';
import { startWorkers } from './helper.ts';

// The scheduler queues a mail when a task pauses itself at the failure limit; the email worker
// sends it to the task's owner with the reason, and none for a task switched back on meanwhile.
const mail = await startMailServer(t);
const env = {
  SMTP_URL: mail.url,
  EMAIL_FROM: 'Agentyard <no-reply@agentyard.test>',
  QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}-task-mail-${randomBytes(3).toString('hex')}`,
};
const workers = await startWorkers(t, env);
const queues = createQueues({ redisUrl: process.env.REDIS_URL!, prefix: env.QUEUE_PREFIX });
t.teardown(async () => {
  await queues.get(QUEUES.email).obliterate({ force: true });
  await queues.close();
});

async function pausedTask(enabled: boolean) {
  const user = await createUserRow();
  const agent = await systemDb()
    .insertInto('agents')
    .values({
      user_id: user.id,
      name: 'a',
      model: 'openrouter/auto',
      tools_profile: 'messaging',
      subdomain: `m-${randomUUID().slice(0, 12)}`,
      status: 'running',
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  const task = await systemDb()
    .insertInto('scheduled_tasks')
    .values({
      user_id: user.id,
      agent_id: agent.id,
      name: 'Morning brief',
      cron_schedule: '0 9 * * *',
      prompt: 'p',
      enabled,
      paused_reason: 'Paused after 5 failed runs in a row; the last: hook agent answered 500',
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return { email: user.email, taskId: task.id };
}
const outcome = (taskId: string) =>
  new Promise<unknown>((resolve) => {
    const done = (job: { data: { taskId?: string } }, result: unknown) => {
      if (job.data.taskId !== taskId) return;
      workers.email.off('completed', done as never);
      resolve(result);
    };
    workers.email.on('completed', done as never);
  });
const queueMail = (taskId: string) =>
  queues.get(QUEUES.email).add(SCHEDULED_TASK_PAUSED_MAIL_JOB, { kind: 'scheduled-task-paused', taskId });

t.test("the owner of a task that paused itself is mailed why, with the schedules page's address", async (t) => {
  const { email, taskId } = await pausedTask(false);
  const delivered = mail.nextMail((m) => m.to.includes(email.toLowerCase()));
  const done = outcome(taskId);
  await queueMail(taskId);
  t.equal(await done, 'sent');
  const message = unfold((await delivered).raw);
  t.match(message, /"Morning brief" stopped running/);
  t.match(message, /Paused after 5 failed runs in a row; the last: hook agent answered 500/);
  t.match(message, `${process.env.PUBLIC_BASE_URL!.replace(/\/$/, '')}/schedules`);
});

t.test('a task switched back on before the mail goes gets none', async (t) => {
  const { taskId } = await pausedTask(true);
  const done = outcome(taskId);
  await queueMail(taskId);
  t.equal(await done, 'no longer paused');
});
