import t from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from '@agentyard/config';
import { useOwnDatabase } from '@agentyard/testing';
import { startAgents, web } from '../agents-harness.ts';

// Issue 29: an awake agent that idles while its gateway holds more than its share of the plan's
// memory is recycled (restarted), and its owner reads it in the agent's events. Process agents (the
// minimal gateway, its memory read from /proc by the metrics sampler), a share so small that any
// gateway passes it, and hibernation off so the agent stays awake; a database of this file's own,
// as the sweep reads every agent.
const gateway = join(repoRoot, 'infra/agent-image/minimal-gateway/server.mjs');

t.test('an idle agent over its memory share is restarted, and its owner reads why', async (t) => {
  await useOwnDatabase(t);
  const dataDir = await mkdtemp(join(tmpdir(), 'agentyard-recycle-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const h = await startAgents(t, {
    RUNTIME_DRIVER: 'process',
    RUNTIME_DATA_DIR: dataDir,
    AGENT_IMAGE: gateway,
    AGENT_PORT_RANGE: '31500-31599',
    HIBERNATE_PAUSE_AFTER: 'off',
    HIBERNATE_STOP_AFTER: 'off',
    HIBERNATE_SWEEP_EVERY_MS: '200',
    AGENT_METRICS_INTERVAL_MS: '1000',
    AGENT_RECYCLE_IDLE_AFTER: '2s',
    AGENT_RECYCLE_MEMORY_PERCENT: '0.001',
  });
  const owner = await h.subscribedUser('solo');
  const provisioned = await h.app.inject({
    method: 'POST',
    url: '/api/agents/provision',
    headers: web(owner),
    payload: { name: 'Leaky' },
  });
  const id: string = provisioned.json().agent.id;
  t.match(await h.provisioned(id), /^running/);
  const before = (await h.agentRow(id))!;

  const events = async () =>
    (await h.app.inject({ method: 'GET', url: `/api/agents/${id}/events`, headers: web(owner) })).json().events as {
      kind: string;
      detail: string | null;
    }[];
  // Polled: the sweep's recycle has no event of its own but the row it writes.
  const deadline = Date.now() + 60_000;
  let recycled: { kind: string; detail: string | null } | undefined;
  while (!recycled && Date.now() < deadline) {
    recycled = (await events()).find((e) => e.kind === 'recycled');
    if (!recycled) await new Promise((resolve) => setTimeout(resolve, 200));
  }
  t.ok(recycled, 'recycled once idle past AGENT_RECYCLE_IDLE_AFTER with its memory sampled');
  t.match(
    recycled?.detail,
    /^idle with \d+ MiB of its 2048 MiB: restarted to give memory back$/,
    'its owner reads why',
  );
  // It would be recycled again every 2 s here: its turn held, no restart comes between.
  const held = await h.holdOperation(id);
  const after = (await h.agentRow(id))!;
  t.equal(after.status, 'running', 'and it runs');
  t.ok(new Date(after.updated_at).getTime() > new Date(before.updated_at).getTime(), 'restarted');
  const answers = () =>
    fetch(`${after.gateway_url}/healthz`, { signal: AbortSignal.timeout(2000) }).then(
      (r) => r.status === 200,
      () => false,
    );
  const until = Date.now() + 30_000;
  let up = await answers();
  while (!up && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    up = await answers();
  }
  t.ok(up, 'its gateway answers after the restart');
  await held.release();
  t.notOk(
    (await events()).some((e) => e.kind === 'exit' || e.kind === 'crash-loop'),
    'a recycle is no crash',
  );
});
