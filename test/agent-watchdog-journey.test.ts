import t from 'tap';
import { systemDb } from '@agentyard/testing';
import { startAgentJourney } from './support/agent-journey.ts';
import { noAgentContainers } from './support/containers.ts';
import { observe } from './support/journey.ts';

// Issue 29's watchdog as an owner meets it, on the platform as `npm start` runs it (every service and
// worker, the edge, the real OpenClaw image in the container engine) with a local model server as
// the AI gateway's provider: the agent's process is killed with SIGKILL (`kill -9` on the host), the
// owner's status shows it down and then running again, the agent answers a chat again through the
// edge, and the owner reads the exit and the restart in its events. Heavy (~1.4 GB, a core for a
// minute while the gateway boots): one agent, removed when the test ends.
t.setTimeout(1_500_000);

t.test(
  'kill -9 of a running agent: it is restarted and answers a chat again; its owner reads why',
  { skip: noAgentContainers },
  async (t) => {
    const journey = await startAgentJourney(t, {
      AGENT_PORT_RANGE: '30700-30799',
      // The status and the chat are asked often while the agent is down: no rate limit in the way.
      RATE_LIMITS: 'web-chat=1000000,web-gateway=1000000',
    });
    const { docker } = journey;
    const { web, userId: owner } = await journey.subscriber('watchdog', 'solo');
    const provisioned = await web.request('POST', '/api/agents/provision', { name: 'Sentinel' });
    t.equal(provisioned.status, 201, 'provisioning accepted');
    const id = ((await provisioned.json()) as { agent: { id: string } }).agent.id;
    journey.removeAtEnd(id, owner);
    const status = async () => {
      const res = await web.request('GET', `/api/agents/${id}`);
      return res.status === 200
        ? ((await res.json()) as { agent: { status: string; lastError: string | null } }).agent
        : { status: `HTTP ${res.status}`, lastError: null };
    };
    const settled = await observe(status, (s) => s.status !== 'provisioning' && s.status !== 'HTTP 429', {
      everyMs: 1000,
      deadlineMs: 540_000,
      what: 'the agent leaving provisioning',
    });
    if (!t.equal(settled.status, 'running', 'the agent runs')) return;
    const turn = () =>
      web.request('POST', '/api/chat', { agentId: id, message: 'are you there?' }, { timeoutMs: 240_000 });
    t.equal((await turn()).status, 200, 'it answers before the kill');

    const { container_id: containerId } = await systemDb()
      .selectFrom('agents')
      .select('container_id')
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    const pid = (await docker.getContainer(containerId!).inspect()).State.Pid;
    const killed = performance.now();
    process.kill(pid, 'SIGKILL');

    // The restart waits 1 s: the owner's status reads error (restarting) within it, from the engine's event.
    const down = await observe(status, (s) => s.status !== 'running' && !s.status.startsWith('HTTP'), {
      everyMs: 100,
      deadlineMs: 60_000,
      what: 'the status leaving running',
    });
    t.match(
      down,
      { status: /^error$/, lastError: 'Exited unexpectedly: restarting' },
      'the status is the engine’s truth: down, restarting',
    );
    const answered = await observe(
      async () => (await turn()).status,
      (code) => code === 200,
      { everyMs: 500, deadlineMs: 300_000, what: 'a chat answered after the kill' },
    );
    t.equal(answered, 200, 'it answers a chat again');
    t.comment(`kill -9 → answering a chat again: ${Math.round(performance.now() - killed)} ms`);
    t.equal((await status()).status, 'running');

    const events = await web.request('GET', `/api/agents/${id}/events`);
    t.equal(events.status, 200);
    const list = ((await events.json()) as { events: { kind: string; exitCode: number | null; expected: boolean }[] })
      .events;
    t.has(
      list.slice(0, 2),
      [{ kind: 'restarted' }, { kind: 'exit', exitCode: 137, expected: false }],
      'the owner reads the exit (SIGKILL: 137) and the restart',
    );
  },
);
