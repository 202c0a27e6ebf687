import t from 'tap';
import { randomBytes } from 'node:crypto';
import { execIn, noCluster } from '../../libs/runtime/test/support/kubernetes-cluster.ts';
import { observe } from '../support/journey.ts';
import { MODEL_WORDS, platformOnCluster } from '../support/kubernetes-platform.ts';

// Issue 34's hibernation on the cluster, as a user meets it: the whole platform with
// RUNTIME_DRIVER=kubernetes and short idle times (pause after 300 ms, stop after 15 s). The API has no
// freezer, so the idle agent is never paused: it runs until it is stopped (its StatefulSet scaled to
// 0, its pod gone, its claim kept); a chat from the web then boots it and is answered, and the file
// written into its workspace before is still there.
t.setTimeout(1_500_000);

interface Agent {
  status: string;
  hibernation: 'paused' | 'stopped' | null;
}

t.test(
  'an idle agent on Kubernetes is stopped (never paused), and a chat wakes it with its files',
  { skip: noCluster },
  async (t) => {
    const cluster = await platformOnCluster(t, 'kubernetes-hibernation', {
      HIBERNATE_PAUSE_AFTER: '300ms',
      HIBERNATE_STOP_AFTER: '15s',
      HIBERNATE_SWEEP_EVERY_MS: '500',
      HIBERNATE_ACTIVITY_EVERY_MS: '100',
    });
    if (!cluster) return;
    const { kc, core, apps, namespace, web, row } = cluster;
    const { id, status, ms: provisionMs } = await cluster.provision('Dormouse');
    // Idle from its start: it may be stopped already by the time this is asked.
    if (!t.match(status, /^(running|suspended)$/, 'the agent came up')) return;
    t.comment(`provisioning → ${status}: ${provisionMs} ms`);
    const name = `agent-${id}`;
    const pod = `${name}-0`;

    // 1. A file in its workspace (files do not need it awake: they are its volume, on this host).
    const notes = `kept while asleep ${randomBytes(4).toString('hex')}`;
    const uploaded = await web.request('POST', `/api/files?agentId=${id}&path=uploads/notes.txt`, notes, {
      headers: { 'content-type': 'text/plain' },
    });
    t.equal(uploaded.status, 201, 'a file uploaded into its workspace');

    // 2. Idle: stopped, with no pause on the way (every state it is seen in, several times a second).
    const seen = new Set<string>();
    const agent = async (): Promise<Agent> => {
      const a = ((await (await web.request('GET', `/api/agents/${id}`)).json()) as { agent: Agent }).agent;
      seen.add(`${a.status}/${a.hibernation ?? '-'}`);
      return a;
    };
    await observe(agent, (a) => a.status === 'suspended' && a.hibernation === 'stopped', {
      everyMs: 100,
      deadlineMs: 180_000,
      what: 'the agent stopped',
    });
    t.notOk(seen.has('suspended/paused'), `never paused (seen: ${[...seen].join(', ')})`);
    // The row says stopped before the pod has gone (whoever reads it from then on wakes the agent).
    const podState = () =>
      core.readNamespacedPod({ name: pod, namespace }).then(
        () => 'there',
        () => 'gone',
      );
    t.equal(
      await observe(podState, (s) => s === 'gone', { everyMs: 250, deadlineMs: 120_000, what: 'its pod gone' }),
      'gone',
      'its pod is gone',
    );
    t.equal((await apps.readNamespacedStatefulSet({ name, namespace })).spec?.replicas, 0, 'its StatefulSet is at 0');
    t.equal(
      (await core.readNamespacedPersistentVolumeClaim({ name: `state-${pod}`, namespace })).status?.phase,
      'Bound',
      'its state claim is kept',
    );

    // 3. A chat wakes it: answered, the person waiting only for the boot.
    const asked = performance.now();
    const { status: chatStatus, content } = await cluster.chat(id, 'Wake up, the tea is ready');
    const wakeMs = Math.round(performance.now() - asked);
    t.equal(chatStatus, 200, 'a chat to the stopped agent is answered');
    t.equal(content, MODEL_WORDS, "with the model server's words");
    t.comment(`wake from hibernation (stopped, pod gone) → first answer: ${wakeMs} ms`);
    t.has(await agent(), { status: 'running', hibernation: null }, 'it runs again');
    const woken = await core.readNamespacedPod({ name: pod, namespace });
    t.equal((await row(id)).gateway_url, `http://${woken.status!.podIP}:18789`, 'the platform reaches its new pod');

    // 4. Its workspace survived the stop: from the web and inside the new pod.
    const download = await web.request('GET', `/api/files?agentId=${id}&path=uploads/notes.txt&download=1`);
    t.equal(await download.text(), notes, 'its file is there (from the web)');
    t.equal(
      await execIn(kc, namespace, pod, ['cat', '/home/node/.openclaw/workspace/uploads/notes.txt']),
      notes,
      'and inside the woken pod',
    );

    const deleted = await web.request('DELETE', `/api/agents/${id}`, undefined, { timeoutMs: 240_000 });
    t.equal(deleted.status, 200, 'deleted from the web');
  },
);
