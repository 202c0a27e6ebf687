import t from 'tap';
import { uniqueEmail } from '@agentyard/testing';
import { startAgentJourney } from './support/agent-journey.ts';
import { noAgentContainers } from './support/containers.ts';
import { agentStatusEvents, registerAndVerify } from './support/journey.ts';

// Issue 29: an agent is its owner's. On the platform as `npm start` runs it (every service and
// worker, the edge, the real OpenClaw image in the container engine), the owner provisions an
// agent and, from the web surface only, restarts it (it answers a chat after), stops and starts it,
// and deletes it (no container left, GET 404); each operation's end arrives on their own event
// stream through the edge. Heavy like agent-work-journey: one agent, removed when the test ends.
t.setTimeout(1_500_000);

t.test(
  'an owner restarts, stops, starts and deletes their agent from the web, and it answers after each start',
  { skip: noAgentContainers },
  async (t) => {
    const journey = await startAgentJourney(t, { AGENT_PORT_RANGE: '39500-39999' });
    const { ours } = journey;
    const { web, userId: owner } = await journey.subscriber('agent-operations', 'solo');
    const events = await agentStatusEvents(web);
    t.teardown(() => events.close());

    // 1. Provision; the stream says when it runs.
    const provisioned = await web.request('POST', '/api/agents/provision', { name: 'Juniper' });
    t.equal(provisioned.status, 201, 'provisioning accepted');
    const id = ((await provisioned.json()) as { agent: { id: string } }).agent.id;
    journey.removeAtEnd(id, owner);
    const came = await events.next(
      (e) => e.agentId === id && (e.status === 'running' || e.status === 'error'),
      540_000,
      'the agent leaving provisioning',
    );
    if (!t.equal(came.status, 'running', 'the agent runs')) return;

    const chat = async (message: string) => {
      const res = await web.request('POST', '/api/chat', { agentId: id, message }, { timeoutMs: 240_000 });
      return { status: res.status, body: (await res.json()) as { message?: { content: string }; code?: string } };
    };
    const answered = async (what: string) => {
      const turn = await chat(`Still there? (${what})`);
      t.equal(turn.status, 200, `${what}: the agent answers`);
      t.equal(turn.body.message?.content, 'Hello from the local provider', `${what}: with the model server's words`);
    };
    await answered('after provisioning');

    /** Asks for `action` on the web and waits for its end on the stream; the milliseconds from asking to done. */
    const operate = async (action: string) => {
      const ended = events.next((e) => e.agentId === id && e.action === action, 480_000, `the end of ${action}`);
      const asked = performance.now();
      const res = await web.request('POST', `/api/agents/${id}/${action}`, {});
      t.equal(res.status, 202, `${action} is accepted`);
      t.same(await res.json(), { id, action, status: 'queued' });
      const event = await ended;
      t.has(event, { outcome: 'done' }, `${action} is done (${event.error ?? 'no error'})`);
      return { event, ms: Math.round(performance.now() - asked) };
    };
    const containerState = async () => (await ours()).map((c) => c.State);

    // 2. Restart from the web: done once the gateway answers again, and the agent chats after it.
    const restarted = await operate('restart');
    t.equal(restarted.event.status, 'running');
    const restartAsked = performance.now() - restarted.ms;
    await answered('after the restart');
    t.comment(
      `restart: asked → done (gateway ready) ${restarted.ms} ms; asked → chat answered ${Math.round(performance.now() - restartAsked)} ms`,
    );

    // 3. Stop: the container stops and a chat is refused; start: it runs and answers again.
    const stopped = await operate('stop');
    t.equal(stopped.event.status, 'stopped');
    t.same(await containerState(), ['exited'], 'the container is stopped, not removed');
    const refused = await chat('Are you asleep?');
    t.equal(refused.status, 409, 'a stopped agent takes no chat');
    t.equal(refused.body.code, 'AGENT_NOT_RUNNING');
    const started = await operate('start');
    t.equal(started.event.status, 'running');
    t.same(await containerState(), ['running']);
    await answered('after the start');
    t.comment(`stop: asked → done ${stopped.ms} ms; start: asked → done (gateway ready) ${started.ms} ms`);

    // 4. Someone else cannot touch it.
    const stranger = journey.client();
    await registerAndVerify(
      stranger,
      journey.mailbox,
      uniqueEmail('agent-operations-other'),
      'another operations password',
    );
    t.equal((await stranger.request('POST', `/api/agents/${id}/stop`, {})).status, 404, "another user's stop: 404");
    t.equal((await stranger.request('DELETE', `/api/agents/${id}`)).status, 404, "another user's delete: 404");
    t.same(await containerState(), ['running'], 'and it still runs');

    // 5. Delete: no container, no agent; deleting again answers the same.
    const gone = events.next((e) => e.agentId === id && e.status === 'deleted', 120_000, 'the deleted event');
    const deleted = await web.request('DELETE', `/api/agents/${id}`, undefined, { timeoutMs: 120_000 });
    t.equal(deleted.status, 200);
    t.same(await deleted.json(), { id, deleted: true });
    await gone;
    t.same(await ours(), [], 'no container left');
    t.equal((await web.request('GET', `/api/agents/${id}`)).status, 404, 'GET is 404');
    const list = (await (await web.request('GET', '/api/agents')).json()) as { agents: { id: string }[] };
    t.notOk(
      list.agents.some((a) => a.id === id),
      'the list lacks it',
    );
    const again = await web.request('DELETE', `/api/agents/${id}`);
    t.equal(again.status, 200, 'deleting again: the same answer');
  },
);
