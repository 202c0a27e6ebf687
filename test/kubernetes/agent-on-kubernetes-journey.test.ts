import t from 'tap';
import { randomBytes } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { DEFAULT_AGENT_IMAGE } from '@agentyard/runtime';
import { execIn, noCluster, podWhere, tagOnNodes } from '../../libs/runtime/test/support/kubernetes-cluster.ts';
import { agentStatusEvents, observe } from '../support/journey.ts';
import { MODEL_WORDS, platformOnCluster } from '../support/kubernetes-platform.ts';

// Issue 34 as a user meets it: the whole platform (every service and worker, the real edge) with
// RUNTIME_DRIVER=kubernetes on the cluster infra/kubernetes/up.sh runs here (two nodes). A user signs
// up, provisions an agent (the real OpenClaw image): its pod is scheduled, it runs and answers a chat
// through the platform's AI gateway (the pod reaches the edge's agent listener on the control plane's
// bridge, 10.245.0.1), a file is written into its workspace; then its node is cordoned and its pod
// deleted (a drain): it comes back on the other node, the platform follows its new address, its file
// is there and it answers again. Its owner updates it to an allowed image the nodes do not hold: the
// update fails, the previous image is restored and answers, and the owner is told; then to an image
// they hold (OpenClaw under a second name): done, it runs that image and answers. Deleted from the
// web, nothing of it is left in the namespace.
t.setTimeout(1_500_000);

/** Allowed for updates, never imported into the nodes (pull policy Never): its pod never starts. */
const NEVER_IMPORTED = 'localhost/agentyard-openclaw:never-imported';
/** The OpenClaw image under a second name, given in the nodes for this run: an update the nodes can run. */
const SECOND_NAME = `localhost/agentyard-openclaw:update-${randomBytes(4).toString('hex')}`;

t.test(
  'an agent on Kubernetes: provisioned, chatting, drained to the other node with its files, an update rolled back, one done, deleted',
  { skip: noCluster },
  async (t) => {
    // 1. A new user, subscribed, on the platform with the kubernetes driver.
    const cluster = await platformOnCluster(t, 'kubernetes', {
      AGENT_IMAGES_ALLOWED: `${SECOND_NAME},${NEVER_IMPORTED}`,
    });
    if (!cluster) return;
    t.teardown(await tagOnNodes(DEFAULT_AGENT_IMAGE, SECOND_NAME));
    const { kc, core, apps, net, nodes, namespace, localDir, web, setSchedulable, row } = cluster;

    // 2. Provisioned: its pod scheduled on a node, running.
    const { id, status: settled, ms: provisionMs } = await cluster.provision('Helm');
    const agent = () => cluster.status(id);
    if (!t.equal(settled, 'running', 'the agent runs')) return;
    t.comment(`provisioning → running (the OpenClaw gateway ready in its pod): ${provisionMs} ms`);
    const name = `agent-${id}`;
    const pod = `${name}-0`;
    const first = await core.readNamespacedPod({ name: pod, namespace });
    const firstNode = first.spec!.nodeName!;
    t.ok(nodes.includes(firstNode), `its pod is scheduled on ${firstNode}`);
    t.has(
      await row(id),
      { gateway_url: `http://${first.status!.podIP}:18789`, container_id: name, image: DEFAULT_AGENT_IMAGE },
      "the platform reaches it at its pod's address",
    );

    // 3. A chat answered through the platform's AI gateway (the pod calls the edge's agent listener).
    const chat = async (what: string) => {
      const { status, content } = await cluster.chat(id, `Still there? (${what})`);
      t.equal(status, 200, `${what}: the agent answers`);
      t.equal(content, MODEL_WORDS, `${what}: with the model server's words`);
    };
    await chat('on its first node');

    // 4. Its state: a file in its workspace, seen from inside the pod.
    const notes = `kept across nodes ${randomBytes(4).toString('hex')}`;
    const uploaded = await web.request('POST', `/api/files?agentId=${id}&path=uploads/notes.txt`, notes, {
      headers: { 'content-type': 'text/plain' },
    });
    t.equal(uploaded.status, 201, 'a file uploaded into its workspace');
    t.equal(
      await execIn(kc, namespace, pod, ['cat', '/home/node/.openclaw/workspace/uploads/notes.txt']),
      notes,
      'the pod reads it from its state volume',
    );

    // 5. A drain: its node cordoned, its pod deleted; the StatefulSet brings it back on the other node.
    await setSchedulable(firstNode, false);
    const moved = performance.now();
    await core.deleteNamespacedPod({ name: pod, namespace });
    const second = await podWhere(
      kc,
      namespace,
      pod,
      (p) =>
        p.metadata?.uid !== first.metadata?.uid &&
        p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true,
      600_000,
    );
    t.comment(`drained: pod deleted → ready on ${second.spec?.nodeName}: ${Math.round(performance.now() - moved)} ms`);
    t.not(second.spec?.nodeName, firstNode, 'the agent is back on the other node');
    t.not(second.status?.podIP, first.status?.podIP, 'at another address');
    // The agents worker follows the pod's readiness (the driver's health events) to its new address.
    const followed = await observe(
      () => row(id),
      (r) => r.gateway_url === `http://${second.status!.podIP}:18789`,
      {
        everyMs: 500,
        deadlineMs: 120_000,
        what: "the platform following the pod's new address",
      },
    );
    t.equal(followed.container_id, name, 'the same agent');
    t.equal(
      await observe(agent, (s) => s === 'running', {
        everyMs: 1000,
        deadlineMs: 300_000,
        what: 'the agent running again',
      }),
      'running',
      'its status is running',
    );
    await chat('after the move');
    const download = await web.request('GET', `/api/files?agentId=${id}&path=uploads/notes.txt&download=1`);
    t.equal(await download.text(), notes, 'its file is intact (from the web)');
    t.equal(
      await execIn(kc, namespace, pod, ['cat', '/home/node/.openclaw/workspace/uploads/notes.txt']),
      notes,
      'and inside the pod on the other node',
    );

    // 6. An update to an allowed image no node holds: its pod never starts, the previous image is
    // restored (its one pod boots again: the claim is ReadWriteOnce), it answers, and its owner is told.
    const events = await agentStatusEvents(web);
    t.teardown(() => events.close());
    const ended = events.next((e) => e.agentId === id && e.action === 'update', 900_000, 'the end of the update');
    const updateAsked = performance.now();
    const update = await web.request('POST', `/api/agents/${id}/update`, { image: NEVER_IMPORTED });
    t.equal(update.status, 202, 'the update is accepted');
    const outcome = await ended;
    const rollbackMs = Math.round(performance.now() - updateAsked);
    t.has(outcome, { outcome: 'failed', status: 'running' }, 'its owner is told the update failed');
    t.match(outcome.error, /previous image was restored/, 'in the words of the rollback');
    t.comment(`image update to a missing image: asked → rolled back, the previous image answering: ${rollbackMs} ms`);
    const set = await apps.readNamespacedStatefulSet({ name, namespace });
    t.equal(
      set.spec?.template.spec?.containers[0]?.image,
      DEFAULT_AGENT_IMAGE,
      'the StatefulSet runs the previous image',
    );
    const restored = await core.readNamespacedPod({ name: pod, namespace });
    // The platform's readiness is the gateway's /readyz (the kubelet's probe may mark the pod Ready a period later).
    t.equal(
      (await fetch(`http://${restored.status!.podIP}:18789/readyz`, { signal: AbortSignal.timeout(10_000) })).status,
      200,
      'its gateway answers /readyz when the owner is told',
    );
    t.has(
      await row(id),
      { gateway_url: `http://${restored.status!.podIP}:18789`, image: DEFAULT_AGENT_IMAGE },
      'the platform reaches the restored pod and names its image',
    );
    t.equal(await agent(), 'running', 'its status is running');
    await chat('after the rolled-back update');
    t.equal(
      await execIn(kc, namespace, pod, ['cat', '/home/node/.openclaw/workspace/uploads/notes.txt']),
      notes,
      'its file is still there',
    );

    // 7. An update to an image the nodes hold: done once the new pod answers; it runs that image and chats.
    const updated = events.next((e) => e.agentId === id && e.action === 'update', 900_000, 'the end of the update');
    const secondAsked = performance.now();
    const again = await web.request('POST', `/api/agents/${id}/update`, { image: SECOND_NAME });
    t.equal(again.status, 202, 'the second update is accepted');
    const done = await updated;
    const updateMs = Math.round(performance.now() - secondAsked);
    t.has(done, { outcome: 'done', status: 'running' }, `its owner is told it is done (${done.error ?? 'no error'})`);
    t.comment(`image update to an image the nodes hold: asked → done (the new pod answering): ${updateMs} ms`);
    const now = await core.readNamespacedPod({ name: pod, namespace });
    t.equal(now.spec?.containers[0]?.image, SECOND_NAME, 'its pod runs the new image');
    t.not(now.metadata?.uid, restored.metadata?.uid, 'a new pod');
    t.has(
      await row(id),
      { gateway_url: `http://${now.status!.podIP}:18789`, image: SECOND_NAME },
      'the platform reaches the new pod and names its image',
    );
    await chat('after the update');
    t.equal(
      await execIn(kc, namespace, pod, ['cat', '/home/node/.openclaw/workspace/uploads/notes.txt']),
      notes,
      'its file is there after the update',
    );

    // 8. Deleted from the web: nothing of it left in the namespace, nor its volume.
    const deleted = await web.request('DELETE', `/api/agents/${id}`, undefined, { timeoutMs: 240_000 });
    t.equal(deleted.status, 200, 'deleted from the web');
    t.equal((await web.request('GET', `/api/agents/${id}`)).status, 404, 'the agent is gone');
    const left = {
      statefulSets: (await apps.listNamespacedStatefulSet({ namespace })).items.length,
      pods: (await core.listNamespacedPod({ namespace })).items.length,
      claims: (await core.listNamespacedPersistentVolumeClaim({ namespace })).items.length,
      secrets: (await core.listNamespacedSecret({ namespace })).items.filter(
        (s) => s.type !== 'kubernetes.io/service-account-token',
      ).length,
      services: (await core.listNamespacedService({ namespace })).items.length,
      networkPolicies: (await net.listNamespacedNetworkPolicy({ namespace })).items.length,
      volumes: (await core.listPersistentVolume({ labelSelector: `agentyard.agent-id=${id}` })).items.length,
    };
    t.same(
      left,
      { statefulSets: 0, pods: 0, claims: 0, secrets: 0, services: 0, networkPolicies: 0, volumes: 0 },
      'nothing left in the namespace, no volume',
    );
    t.equal(
      await stat(join(localDir, id)).then(
        () => 'there',
        () => 'gone',
      ),
      'gone',
      'its state directory is removed',
    );
  },
);
