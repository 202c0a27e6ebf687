import t from 'tap';
import { randomBytes } from 'node:crypto';
import { type Delivered, noPrivateEngine, startPrivateEngine, systemDb } from '@agentyard/testing';
import { startAgentJourney } from '../support/agent-journey.ts';
import { noAgentContainers } from '../support/containers.ts';
import { observe } from '../support/journey.ts';

// Issues 29 and 31, "tried against the fault a real system meets": the container engine's API
// restarts under the platform as `npm start` runs it (every service and worker, the edge, the real
// OpenClaw image, a local model server). The platform talks to an engine API of this file's own
// (`podman system service` on its own socket, over the machine's containers), so the restart touches
// no other test file. While the API is away: a chat is answered and a scheduled prompt falls due and
// reaches the agent once (a running agent is reached at its gateway, not through the engine); then
// the agent's process is killed, which nothing can see until the API is back. Once it is back, the
// watchdog follows the engine's events again, finds the exit it missed, restarts the agent, and the
// agent answers again. Heavy: one real agent (~1.4 GB), a few minutes.
t.setTimeout(1_500_000);

const skip = noAgentContainers || noPrivateEngine();
const messagesOf = (d: Delivered) => (d.body.messages ?? []) as { role: string; content: unknown }[];
const textOf = (content: unknown) => (typeof content === 'string' ? content : JSON.stringify(content ?? ''));
const turnWith = (words: string) => (d: Delivered) =>
  messagesOf(d).some((m) => m.role === 'user' && textOf(m.content).includes(words));

t.test(
  'the engine API restarts: turns and prompts go on, and an exit it missed is found and restarted',
  { skip },
  async (t) => {
    const engine = await startPrivateEngine();
    t.teardown(() => engine.close());
    const journey = await startAgentJourney(t, {
      DOCKER_HOST: engine.dockerHost,
      AGENT_PORT_RANGE: '30600-30699',
      // The status and the chat are asked often while the agent is down: no rate limit in the way.
      RATE_LIMITS: 'web-chat=1000000,web-gateway=1000000',
    });
    const { docker, model } = journey;
    const { web, userId: owner } = await journey.subscriber('engine-restart', 'solo');
    const { id, status, settled } = await journey.provision(web, owner, 'Lighthouse');
    if (!t.equal(await settled(), 'running', 'the agent runs')) return;
    const turn = (message: string) =>
      web.request('POST', '/api/chat', { agentId: id, message }, { timeoutMs: 240_000 });
    t.equal((await turn('are you there?')).status, 200, 'it answers before the fault');

    // 1. The engine's API goes away. A chat is still answered; a one-shot prompt due now reaches the agent once.
    await engine.stop();
    t.equal(
      (await turn('still there without the engine?')).status,
      200,
      'a chat is answered while the engine API is away',
    );
    const prompt = `Check the lamp (${randomBytes(4).toString('hex')})`;
    const runAt = new Date(Math.ceil((Date.now() + 10_000) / 1000) * 1000).toISOString();
    const created = await web.request('POST', '/api/scheduled-tasks', {
      agentId: id,
      name: 'lamp',
      prompt,
      runAt,
      timezone: 'Europe/Lisbon',
    });
    t.equal(created.status, 201, 'a one-shot task is scheduled while the engine API is away');
    const task = (await created.json()) as { id: string };
    await model.delivery(turnWith(prompt), 300_000);
    t.ok(Date.now() >= Date.parse(runAt), 'the prompt reached the agent at its time');
    type Run = { status: string; error: string | null };
    const runsOf = async () =>
      ((await (await web.request('GET', `/api/scheduled-tasks/${task.id}/runs`)).json()) as { runs: Run[] }).runs;
    const runs = await observe(runsOf, (list) => list.some((r) => r.status !== 'pending' && r.status !== 'delivered'), {
      everyMs: 500,
      deadlineMs: 180_000,
      what: 'the run answered',
    });
    t.has(runs, [{ status: 'answered', error: null }], 'one run, answered');

    // 2. Still without the API, the agent's process is killed: its container exits unseen by the platform.
    const { container_id: containerId } = await systemDb()
      .selectFrom('agents')
      .select('container_id')
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    // The machine's own engine API (not the platform's) reads the container while the platform's is away.
    const container = docker.getContainer(containerId!);
    process.kill((await container.inspect()).State.Pid, 'SIGKILL');
    await observe(
      async () => (await container.inspect()).State.Status,
      (s) => s === 'exited' || s === 'stopped',
      { everyMs: 200, deadlineMs: 60_000, what: 'the container exiting' },
    );

    // 3. The API comes back: the watchdog follows again, catches up on the exit and restarts the agent.
    await engine.start();
    const back = performance.now();
    const answered = await observe(
      async () => (await turn('back again?')).status,
      (code) => code === 200,
      { everyMs: 500, deadlineMs: 300_000, what: 'a chat answered after the engine came back' },
    );
    t.equal(answered, 200, 'it answers a chat again');
    t.comment(`engine API back → the killed agent answering a chat again: ${Math.round(performance.now() - back)} ms`);
    t.equal(await status(), 'running');
    const events = (
      (await (await web.request('GET', `/api/agents/${id}/events`)).json()) as {
        events: { kind: string; exitCode: number | null; expected: boolean }[];
      }
    ).events;
    t.has(
      events.slice(0, 2),
      [{ kind: 'restarted' }, { kind: 'exit', exitCode: 137, expected: false }],
      'the owner reads the exit it missed (SIGKILL: 137) and the restart',
    );
    t.equal((await runsOf()).length, 1, 'the scheduled prompt has one run through it all');
  },
);
