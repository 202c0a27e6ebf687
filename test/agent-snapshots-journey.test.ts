import t from 'tap';
import { randomBytes } from 'node:crypto';
import { startAgentJourney } from './support/agent-journey.ts';
import { noAgentContainers } from './support/containers.ts';
import { observe } from './support/journey.ts';

// Issue 30 as an owner meets it, through the real edge on the platform as `npm start` runs it, with
// the real OpenClaw image: a memory written through the memory API (the gateway's own files.set),
// a snapshot, the memory reset, a restore, and the agent remembers (read back through the gateway);
// then a clone of that snapshot, a second agent that remembers too. Heavy: two OpenClaw agents,
// each rebuilt once.
t.setTimeout(1_800_000);

t.test(
  'an owner snapshots an agent, resets its memory, restores it and clones it: both remember',
  { skip: noAgentContainers },
  async (t) => {
    const journey = await startAgentJourney(t, { AGENT_PORT_RANGE: '39500-39999' });
    const { platform } = journey;
    const { web, userId: owner } = await journey.subscriber('snapshots', 'collective');
    const backend = (method: string, path: string) =>
      fetch(`${platform.backendUrl}${path}`, {
        method,
        signal: AbortSignal.timeout(240_000),
        headers: { authorization: `Bearer ${platform.env.INTERNAL_API_KEY}`, 'x-user-id': owner },
      });
    const status = async (id: string) => {
      const res = await web.request('GET', `/api/agents/${id}`);
      return res.status === 200
        ? ((await res.json()) as { agent: { status: string } }).agent.status
        : `HTTP ${res.status}`;
    };
    const runningSoon = (id: string, what: string) =>
      observe(
        () => status(id),
        (s) => s !== 'provisioning' && s !== 'pending',
        { everyMs: 1000, deadlineMs: 600_000, what },
      );
    /** MEMORY.md as the agent's gateway reads it (its own `agents.files.get`), once the gateway answers. */
    const memoryOf = async (id: string) => {
      const res = await web.request('GET', `/api/memory?agentId=${id}`, undefined, { timeoutMs: 60_000 });
      return res.status === 200 ? ((await res.json()) as { memory: string }).memory : `HTTP ${res.status}`;
    };

    /** The gateway not answering yet (being rebuilt, booting) or the agent busy with an operation. */
    const notAnswering = (m: string) => /^HTTP (5\d\d|404|409)$/.test(m);

    const provisioned = await web.request('POST', '/api/agents/provision', { name: 'Elephant' });
    t.equal(provisioned.status, 201);
    const { id } = ((await provisioned.json()) as { agent: { id: string } }).agent;
    journey.removeAtEnd(id, owner);
    if (!t.equal(await runningSoon(id, 'the agent running'), 'running')) return;

    const fact = `The owner's cat is called Quince-${randomBytes(4).toString('hex')}.`;
    const written = await web.request(
      'PUT',
      '/api/memory',
      { agentId: id, content: `# Memory\n\n${fact}\n` },
      { timeoutMs: 60_000 },
    );
    t.equal(written.status, 200, 'memory written through the gateway');
    t.match(await memoryOf(id), fact);

    const taken = await web.request('POST', `/api/agents/${id}/snapshots`, { label: 'with the cat' });
    t.equal(taken.status, 202, 'snapshot accepted');
    const snapshotId = ((await taken.json()) as { snapshot: { id: string } }).snapshot.id;
    type Listed = { id: string; status: string; reason: string; sizeBytes: number | null };
    const listed = async () =>
      ((await (await web.request('GET', `/api/agents/${id}/snapshots`)).json()) as { snapshots: Listed[] }).snapshots;
    const ready = await observe(listed, (list) => list.some((s) => s.id === snapshotId && s.status !== 'pending'), {
      everyMs: 500,
      deadlineMs: 120_000,
      what: 'the snapshot taken',
    });
    t.match(
      ready.find((s) => s.id === snapshotId),
      { status: /^ready$/, reason: /^manual$/, sizeBytes: Number },
    );

    const reset = await backend('POST', `/api/agents/${id}/reset-memory`);
    t.equal(reset.status, 200, 'memory reset');
    const forgotten = await observe(
      () => memoryOf(id),
      (m) => !notAnswering(m),
      { everyMs: 2000, deadlineMs: 600_000, what: 'the reset agent answering' },
    );
    t.notOk(forgotten.includes(fact), 'the reset agent has forgotten');

    const restored = await web.request('POST', `/api/agents/${id}/restore`, { snapshotId }, { timeoutMs: 240_000 });
    t.equal(restored.status, 200, 'restored');
    const remembered = await observe(
      () => memoryOf(id),
      (m) => !notAnswering(m),
      { everyMs: 2000, deadlineMs: 600_000, what: 'the restored agent answering' },
    );
    t.match(remembered, fact, 'the restored agent remembers');
    t.ok(
      (await listed()).some((s) => s.reason === 'before-restore' && s.status === 'ready'),
      'the state before the restore is a snapshot',
    );

    const cloned = await web.request(
      'POST',
      `/api/agents/${id}/clone`,
      { snapshotId, name: 'Elephant calf' },
      { timeoutMs: 240_000 },
    );
    t.equal(cloned.status, 201, 'cloned');
    const clone = ((await cloned.json()) as { agent: { id: string } }).agent.id;
    journey.removeAtEnd(clone, owner);
    if (!t.equal(await runningSoon(clone, 'the clone running'), 'running')) return;
    const cloneMemory = await observe(
      () => memoryOf(clone),
      (m) => !notAnswering(m),
      { everyMs: 2000, deadlineMs: 600_000, what: 'the clone answering' },
    );
    t.match(cloneMemory, fact, 'the clone remembers too');
  },
);
