import t from 'tap';
import { randomBytes } from 'node:crypto';
import { type Delivered, useOwnDatabase } from '@agentyard/testing';
import { startAgentJourney } from './support/agent-journey.ts';
import { noAgentContainers } from './support/containers.ts';
import { observe } from './support/journey.ts';

// This file's sweep pauses whatever idles for 300 ms in the agents table it reads: a database of its
// own, or it would pause the agents of test files running beside it.
await useOwnDatabase(t);

// Issue 30's hibernation as a user meets it, on the platform as `npm start` runs it (every service
// and worker, the real OpenClaw image in the container engine, a local OpenAI-wire model server as
// the AI gateway's provider), with short idle times: the idle agent is paused by the engine, and a
// chat through the edge wakes it and is answered, 25 times in a row; concurrent chats wake it once;
// left longer it is stopped (the watchdog sees no crash), a chat boots it and is answered; stopped
// again, a scheduled prompt starts it ahead of its due time and reaches it on time. Heavy: one real
// agent (~1.4 GB), a few minutes.
t.setTimeout(1_800_000);

// 100 cycles run on the real engine with the minimal gateway (services/agents/test/e2e/agents-hibernation.test.ts); here, the real image.
const CYCLES = 25;
const messagesOf = (d: Delivered) => (d.body.messages ?? []) as { role: string; content: unknown }[];
const textOf = (content: unknown) => (typeof content === 'string' ? content : JSON.stringify(content ?? ''));
const turnWith = (words: string) => (d: Delivered) =>
  messagesOf(d).some((m) => m.role === 'user' && textOf(m.content).includes(words));

interface Agent {
  id: string;
  status: string;
  hibernation: 'paused' | 'stopped' | null;
}

t.test(
  'idle agents hibernate and every request wakes them, through the edge with the real OpenClaw image',
  { skip: noAgentContainers },
  async (t) => {
    const journey = await startAgentJourney(t, {
      AGENT_PORT_RANGE: '38500-38999',
      AGENT_READY_TIMEOUT_MS: '840000',
      // Short idle times, a sweep several times a second, activity written at once.
      HIBERNATE_PAUSE_AFTER: '300ms',
      HIBERNATE_STOP_AFTER: '6s',
      HIBERNATE_SWEEP_EVERY_MS: '200',
      HIBERNATE_ACTIVITY_EVERY_MS: '100',
      HIBERNATE_BOOT_ESTIMATE_MS: '60000',
      RATE_LIMITS: 'web-chat=100000,web-gateway=100000,backend-agent-chat=100000,backend-agent-models=100000',
    });
    const { docker, ours, model } = journey;
    const { web, userId: owner } = await journey.subscriber('hibernation', 'collective');
    const provisioned = await web.request('POST', '/api/agents/provision', { name: 'Dormouse' });
    t.equal(provisioned.status, 201, 'provisioning accepted');
    const agentId = ((await provisioned.json()) as { agent: { id: string } }).agent.id;
    journey.removeAtEnd(agentId, owner);
    const agent = async (): Promise<Agent> =>
      ((await (await web.request('GET', `/api/agents/${agentId}`)).json()) as { agent: Agent }).agent;
    const asleep = (depth: 'paused' | 'stopped', deadlineMs = 60_000) =>
      observe(agent, (a) => a.status === 'suspended' && a.hibernation === depth, {
        everyMs: 50,
        deadlineMs,
        what: `the agent ${depth}`,
      });
    const settled = await observe(agent, (a) => !['pending', 'provisioning', 'deploying'].includes(a.status), {
      everyMs: 1000,
      deadlineMs: 900_000,
      what: 'provisioning',
    });
    if (!t.match(settled.status, /^(running|suspended)$/, 'the agent came up')) return;
    let containerId = '';
    const engineState = async () => (await docker.getContainer(containerId).inspect()).State.Status;
    const chat = (message: string) => web.request('POST', '/api/chat', { agentId, message }, { timeoutMs: 240_000 });
    const answered = async (message: string) => {
      const res = await chat(message);
      const body = (await res.json().catch(() => ({}))) as { message?: { content?: string }; error?: string };
      const ok = res.status === 200 && body.message?.content === 'Hello from the local provider';
      if (!ok) t.comment(`${message}: ${res.status} ${JSON.stringify(body)}`);
      return ok;
    };

    // 1. Idle: paused by the engine (memory kept, no CPU). A chat wakes it and is answered.
    await asleep('paused');
    containerId = (await ours()).find((c) => c.State === 'paused')?.Id ?? '';
    t.ok(containerId, "the engine holds the agent's container paused");
    const question = `Are you there, dormouse? (${randomBytes(4).toString('hex')})`;
    t.ok(await answered(question), 'a chat to the paused agent is answered');
    await model.delivery(turnWith(question), 1000);

    // 2. 100 pauses and wakes in a row, each followed by a chat: none fails.
    const failed: number[] = [];
    for (let cycle = 1; cycle <= CYCLES; cycle++) {
      await asleep('paused');
      if (!(await answered(`Cycle ${cycle}: still with me?`))) failed.push(cycle);
    }
    t.same(failed, [], `${CYCLES} pause → chat cycles, every chat answered`);

    // 3. Three chats at once to the paused agent: all answered, one resume by the engine.
    await asleep('paused');
    const startNs = BigInt(Date.now()) * 1_000_000n;
    const since = Math.floor(Date.now() / 1000) - 1;
    const together = await Promise.all([1, 2, 3].map((n) => answered(`Together ${n}`)));
    t.same(together, [true, true, true], 'concurrent chats to a paused agent are all answered');
    const until = Math.ceil(Date.now() / 1000) + 1;
    const events = (
      await new Promise<string>((resolve, reject) =>
        docker.getEvents({ since, until }, (error, stream) => {
          if (error || !stream) return reject(error);
          let text = '';
          stream.on('data', (chunk: Buffer) => {
            text += chunk.toString();
          });
          stream.on('end', () => resolve(text));
          stream.on('error', reject);
        }),
      )
    )
      .split('\n')
      .filter(Boolean)
      .map(
        (line) =>
          JSON.parse(line) as {
            Action?: string;
            status?: string;
            Actor?: { ID?: string };
            id?: string;
            timeNano?: number | string;
          },
      );
    // Only what happened once the chats were sent (the engine's own clock, in nanoseconds).
    const resumes = events.filter(
      (e) =>
        (e.Action ?? e.status) === 'unpause' &&
        (e.Actor?.ID ?? e.id) === containerId &&
        BigInt(e.timeNano ?? 0) >= startNs,
    );
    t.equal(resumes.length, 1, 'the concurrent wakes were one resume');

    // 4. Idle for longer: stopped (its state disk kept); the watchdog records the exit as expected, no restart.
    await asleep('stopped', 120_000);
    // The row says so before the gateway has exited: whoever reads it from then on wakes the agent.
    // Podman reports `stopped` until its cleanup of the container has run, `exited` after: both are stopped.
    t.match(
      await observe(engineState, (state) => state === 'exited' || state === 'stopped', {
        everyMs: 100,
        deadlineMs: 60_000,
        what: 'the container stopping',
      }),
      /^(exited|stopped)$/,
      'the container is stopped',
    );
    type Event = { kind: string; expected: boolean; detail: string | null };
    const history = await observe(
      async () =>
        ((await (await web.request('GET', `/api/agents/${agentId}/events`)).json()) as { events: Event[] }).events,
      (events) => events.some((e) => e.kind === 'exit'),
      { everyMs: 500, deadlineMs: 60_000, what: "the watchdog's record of the exit" },
    );
    t.match(
      history.find((e) => e.kind === 'exit'),
      { expected: true, detail: 'while suspended' },
      'the watchdog records the exit as expected, while suspended',
    );
    t.notOk(
      history.some((e) => (e.kind === 'exit' || e.kind === 'oom') && !e.expected),
      'no unexpected exit recorded',
    );
    t.notOk(
      history.some((e) => e.kind === 'restarted' || e.kind === 'crash-loop'),
      'nothing restarted by the watchdog',
    );
    t.equal((await agent()).status, 'suspended', 'still suspended, not in error');

    // 5. A chat to the stopped agent boots it and is answered.
    t.ok(await answered('Wake up, the tea is ready'), 'a chat to the stopped agent is answered');

    // 6. Stopped again, a one-shot prompt: the agent is started ahead of its due time and the prompt arrives on time.
    await asleep('stopped', 120_000);
    const prompt = `Good morning, dormouse (${randomBytes(4).toString('hex')})`;
    const runAt = new Date(Math.ceil((Date.now() + 180_000) / 1000) * 1000).toISOString();
    const created = await web.request('POST', '/api/scheduled-tasks', {
      agentId,
      name: 'morning',
      prompt,
      runAt,
      timezone: 'UTC',
    });
    t.equal(created.status, 201, 'a one-shot task in 3 minutes');
    const task = (await created.json()) as { id: string };
    const ahead = await observe(agent, (a) => a.hibernation !== 'stopped', {
      everyMs: 200,
      deadlineMs: Date.parse(runAt) - Date.now(),
      what: 'the agent started ahead of its prompt',
    });
    t.not(ahead.hibernation, 'stopped', 'started before the prompt was due');
    await model.delivery(turnWith(prompt), 300_000);
    t.ok(Date.now() >= Date.parse(runAt), 'the turn ran at its time, not before');
    const runs = await observe(
      async () =>
        (
          (await (await web.request('GET', `/api/scheduled-tasks/${task.id}/runs`)).json()) as {
            runs: { status: string; error: string | null }[];
          }
        ).runs,
      (list) => list.some((r) => r.status !== 'pending'),
      { everyMs: 500, deadlineMs: 60_000, what: 'the run' },
    );
    t.has(runs[0], { status: 'delivered', error: null }, 'delivered on time (not late, not missed)');
  },
);
