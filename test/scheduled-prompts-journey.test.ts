import t from 'tap';
import { randomBytes } from 'node:crypto';
import { DEFAULT_AGENT_IMAGE } from '@agentyard/runtime';
import {
  type Delivered,
  startLocalProviders,
  startMailServer,
  startWholePlatform,
  uniqueEmail,
} from '@agentyard/testing';
import { noAgentContainers, runContainers } from './support/containers.ts';
import { observe, payAtLocalCheckout, registerAndVerify, WebClient } from './support/journey.ts';

// Issue 31's schedules as a user meets them, on the platform as `npm start` runs it (every service
// and worker, the real OpenClaw image in the container engine, a local OpenAI-wire model server as
// the AI gateway's provider): a one-shot task in a non-UTC zone reaches the agent, which runs the
// turn (the model server gets the prompt), and its run is answered with the agent's reply, tokens
// and cost (read from the agent's transcript and the AI gateway's usage); Run now does the same; a
// recurring task whose agent is stopped across its due time records the run as missed, with the
// reason. Heavy (one real agent, ~1.4 GB, a core for a minute while the gateway boots).
t.setTimeout(1_500_000);

const skip = noAgentContainers;
const messagesOf = (d: Delivered) => (d.body.messages ?? []) as { role: string; content: unknown }[];
const textOf = (content: unknown) => (typeof content === 'string' ? content : JSON.stringify(content ?? ''));
/** The model request of the agent's turn that carries `words` from the user (the scheduled prompt). */
const turnWith = (words: string) => (d: Delivered) =>
  messagesOf(d).some((m) => m.role === 'user' && textOf(m.content).includes(words));

interface Run {
  id: string;
  dueAt: string;
  status: string;
  manual: boolean;
  reply: string | null;
  tokens: number | null;
  costUsd: number | null;
  error: string | null;
}
/** The local model server's answer (libs/testing local-providers), as the agent's reply. */
const MODEL_ANSWER = /Hello from the local provider/;
/** A run settled: answered or failed, no longer waiting for its turn. */
const settledRun = (r: Run) => r.status !== 'pending' && r.status !== 'delivered';

t.test(
  'a one-shot in a zone, Run now, and a stopped agent through the edge with the real OpenClaw image',
  { skip },
  async (t) => {
    const { own, ours, removeOurs } = runContainers();
    const model = await startLocalProviders(t);
    const mailbox = await startMailServer(t);
    const platform = await startWholePlatform(
      {
        RUNTIME_INSTANCE: own,
        AGENT_IMAGE: DEFAULT_AGENT_IMAGE,
        AGENT_PORT_RANGE: '39500-39999',
        AGENT_READY_TIMEOUT_MS: '420000',
        OPENAI_BASE_URL: model.env.OPENAI_BASE_URL,
        OPENAI_API_KEY: model.env.OPENAI_API_KEY,
        SMTP_URL: mailbox.url,
        BILLING_PROVIDER: 'local',
        // A recurring task every 10 s, so a due time falls inside the stop within the test's patience.
        SCHEDULER_MIN_INTERVAL_SECONDS: '*:10',
      },
      { listenTimeoutMs: 180_000 },
    );
    let agentId: string | undefined;
    let owner = '';
    const backend = (method: string, path: string) =>
      fetch(`${platform.backendUrl}${path}`, {
        method,
        signal: AbortSignal.timeout(120_000),
        headers: { authorization: `Bearer ${platform.env.INTERNAL_API_KEY}`, 'x-user-id': owner },
      });
    t.teardown(async () => {
      if (agentId) await backend('DELETE', `/api/agents/${agentId}`).catch(() => undefined);
      await platform.stop();
      await removeOurs();
    });

    const web = new WebClient(platform.webUrl, platform.env.PUBLIC_BASE_URL!);
    const joined = await registerAndVerify(web, mailbox, uniqueEmail('schedules'), 'a schedules journey password');
    owner = joined.userId;
    t.equal(await payAtLocalCheckout(web, 'collective'), 303, 'subscribed');
    const provisioned = await web.request('POST', '/api/agents/provision', { name: 'Juniper' });
    t.equal(provisioned.status, 201, 'provisioning accepted');
    agentId = ((await provisioned.json()) as { agent: { id: string } }).agent.id;
    const status = async () => {
      const res = await web.request('GET', `/api/agents/${agentId}`);
      return res.status === 200
        ? ((await res.json()) as { agent: { status: string } }).agent.status
        : `HTTP ${res.status}`;
    };
    const settled = await observe(status, (s) => s !== 'provisioning' && s !== 'HTTP 429', {
      everyMs: 1000,
      deadlineMs: 540_000,
      what: 'the agent leaving provisioning',
    });
    if (!t.equal(settled, 'running', 'the agent runs')) return;
    t.equal((await ours()).length, 1, 'one container of the real OpenClaw image');

    const runsOf = async (taskId: string) =>
      ((await (await web.request('GET', `/api/scheduled-tasks/${taskId}/runs`)).json()) as { runs: Run[] }).runs;
    const create = async (body: object) => {
      const res = await web.request('POST', '/api/scheduled-tasks', { agentId, ...body });
      t.equal(res.status, 201, `created: ${JSON.stringify(body)}`);
      return (await res.json()) as { id: string; timezone: string; runAt: string | null; nextRun: string | null };
    };

    // 1. "Remind me" once, in Kolkata (UTC+05:30): the agent gets the prompt at its time and runs the turn.
    const reminder = `Remind me to water the juniper (${randomBytes(4).toString('hex')})`;
    const runAt = new Date(Math.ceil((Date.now() + 20_000) / 1000) * 1000).toISOString();
    const once = await create({ name: 'water the juniper', prompt: reminder, runAt, timezone: 'Asia/Kolkata' });
    t.match(once, { timezone: /^Asia\/Kolkata$/, runAt, nextRun: runAt });
    await model.delivery(turnWith(reminder), 300_000);
    t.ok(Date.now() >= Date.parse(runAt), 'the turn ran at its time, not before');
    const [onceRun] = await observe(
      () => runsOf(once.id),
      (runs) => runs.some(settledRun),
      { everyMs: 1000, deadlineMs: 180_000, what: 'the one-shot run answered' },
    );
    t.match(
      onceRun,
      { dueAt: runAt, status: /^answered$/, manual: false, reply: MODEL_ANSWER, error: null },
      "its run is answered with the agent's reply",
    );
    t.ok(
      onceRun!.tokens! > 0 && onceRun!.costUsd! > 0,
      `with the turn's tokens and cost: ${onceRun!.tokens} tokens, ${onceRun!.costUsd} USD`,
    );
    const listed = (
      (await (await web.request('GET', `/api/scheduled-tasks?agentId=${agentId}`)).json()) as {
        tasks: { id: string; enabled: boolean; lastStatus: string }[];
      }
    ).tasks;
    t.has(
      listed.find((x) => x.id === once.id),
      { enabled: false, lastStatus: 'answered' },
      'done, kept, switched off',
    );

    // 2. Run now: the same, whenever the user asks.
    const now = `What is on today's list? (${randomBytes(4).toString('hex')})`;
    const yearly = await create({
      name: 'new year',
      prompt: now,
      cronSchedule: '0 0 1 1 *',
      timezone: 'Europe/Berlin',
    });
    const started = await web.request('POST', `/api/scheduled-tasks/${yearly.id}/run`);
    t.equal(started.status, 202, 'run now accepted');
    const { run } = (await started.json()) as { run: { id: string; status: string } };
    t.equal(run.status, 'pending');
    await model.delivery(turnWith(now), 300_000);
    const manual = await observe(
      () => runsOf(yearly.id),
      (runs) => runs.some((r) => r.id === run.id && settledRun(r)),
      { everyMs: 1000, deadlineMs: 180_000, what: 'the run by hand answered' },
    );
    t.match(
      manual.find((r) => r.id === run.id),
      { status: /^answered$/, manual: true, reply: MODEL_ANSWER, error: null },
      'Run now answered',
    );

    // 3. The owner stops the agent; a recurring task falls due meanwhile: missed, with the reason, never sent.
    t.equal((await backend('POST', `/api/agents/${agentId}/stop`)).status, 200, 'agent stopped');
    t.equal(
      await observe(status, (s) => s === 'stopped', { everyMs: 1000, deadlineMs: 120_000, what: 'the agent stopping' }),
      'stopped',
    );
    const asleep = `Are you awake? (${randomBytes(4).toString('hex')})`;
    const recurring = await create({
      name: 'are you awake',
      prompt: asleep,
      cronSchedule: '*/10 * * * * *',
      timezone: 'America/New_York',
    });
    const missed = await observe(
      () => runsOf(recurring.id),
      (runs) => runs.length > 0,
      { everyMs: 1000, deadlineMs: 60_000, what: 'a run of the recurring task' },
    );
    t.match(
      missed[0],
      { status: /^missed$/, error: 'the agent was stopped at its due time' },
      'recorded missed, with the reason',
    );
    t.equal((await web.request('PUT', '/api/scheduled-tasks', { taskId: recurring.id, enabled: false })).status, 200);
    await t.rejects(model.delivery(turnWith(asleep), 1000), 'the stopped agent never got it');
  },
);
