import t from 'tap';
import { randomUUID } from 'node:crypto';
import { AGENT_CRASH_LOOP_MAIL_JOB, createQueues, QUEUES } from '@agentyard/queue';
import { createUserRow, systemDb } from '@agentyard/testing';
import { jobDone, startWorkers } from './helper.ts';
import { startMailServer, unfold } from './mail-server.ts';

// The owner's mail when an agent crash-loops: the agents worker queues the job (the event's id
// only), the auth worker, which owns mail, reads the event and sends it over real SMTP.

async function crashLoopOf(email?: string) {
  const user = await createUserRow(email ? { email } : {});
  const agent = await systemDb()
    .insertInto('agents')
    .values({
      user_id: user.id,
      name: 'Scout',
      model: 'openrouter/auto',
      tools_profile: 'messaging',
      subdomain: `scout-${randomUUID().slice(0, 8)}`,
      status: 'error',
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  const event = await systemDb()
    .insertInto('agent_events')
    .values({
      agent_id: agent.id,
      user_id: user.id,
      kind: 'crash-loop',
      exit_code: 137,
      detail: '3 times within 5 minutes',
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return { user, agentId: agent.id, eventId: event.id };
}

t.test('a crash loop mails the owner a link to the agent; suppressed or gone: no mail', async (t) => {
  const mail = await startMailServer(t);
  const workers = await startWorkers(t, { SMTP_URL: mail.url });
  const queues = createQueues({ redisUrl: process.env.REDIS_URL!, prefix: process.env.QUEUE_PREFIX! });
  t.teardown(() => queues.close());
  const send = async (eventId: string) => {
    const jobId = `crash-loop-${eventId}`;
    const done = jobDone<string>(workers.email, jobId);
    await queues.get(QUEUES.email).add(AGENT_CRASH_LOOP_MAIL_JOB, { eventId }, { jobId });
    return done;
  };

  const { user, agentId, eventId } = await crashLoopOf();
  const delivered = mail.nextMail((m) => m.to.includes(user.email.toLowerCase()));
  t.equal(await send(eventId), 'sent');
  const message = unfold((await delivered).raw);
  t.match(message, /Subject: Your agent Scout keeps crashing/);
  t.match(message.replace(/\s+/g, ' '), /exited 3 times within 5 minutes; its last exit code was 137/);
  t.ok(
    message.includes(`${process.env.PUBLIC_BASE_URL!.replace(/\/$/, '')}/agents/${agentId}`),
    'links to the agent page (its Repair button)',
  );

  const suppressed = await crashLoopOf();
  await systemDb()
    .insertInto('email_suppressions')
    .values({ address: suppressed.user.email.toLowerCase(), reason: 'bounced' })
    .execute();
  t.equal(await send(suppressed.eventId), 'suppressed');

  const gone = await crashLoopOf();
  await systemDb().deleteFrom('agents').where('id', '=', gone.agentId).execute();
  t.equal(await send(gone.eventId), 'no event', 'a deleted agent (its events went with it) gets no mail');
});
