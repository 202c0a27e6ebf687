import t from 'tap';
import { randomBytes } from 'node:crypto';
import { rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { DEFAULT_AGENT_IMAGE } from '@agentyard/runtime';
import { startLocalProviders, startMailServer, startWholePlatform, systemDb, uniqueEmail } from '@agentyard/testing';
import {
  clusterClients,
  execIn,
  kubeconfig,
  localStateDir,
  noCluster,
  podWhere,
  readyNodes,
} from '../../libs/runtime/test/support/kubernetes-cluster.ts';
import { observe, payAtLocalCheckout, registerAndVerify, WebClient } from '../support/journey.ts';

// Issue 34 as a user meets it: the whole platform (every service and worker, the real edge) with
// RUNTIME_DRIVER=kubernetes on the cluster infra/kubernetes/up.sh runs here (two nodes). A user signs
// up, provisions an agent (the real OpenClaw image): its pod is scheduled, it runs and answers a chat
// through the platform's AI gateway (the pod reaches the edge's agent listener on the control plane's
// bridge, 10.245.0.1), a file is written into its workspace; then its node is cordoned and its pod
// deleted (a drain): it comes back on the other node, the platform follows its new address, its file
// is there and it answers again. Deleted from the web, nothing of it is left in the namespace.
/** The host's address on the control plane's bridge: where pods on both nodes reach the platform. */
const BRIDGE_HOST = '10.245.0.1';
t.setTimeout(1_500_000);

t.test(
  'an agent on Kubernetes: provisioned, chatting, drained to the other node with its files, deleted',
  { skip: noCluster },
  async (t) => {
    const { kc, core, apps, net } = clusterClients();
    const nodes = await readyNodes(core);
    if (!t.ok(nodes.length >= 2, `two Ready nodes (${nodes.join(', ')})`)) return;

    const namespace = `agentyard-journey-${randomBytes(4).toString('hex')}`;
    const instance = `k8s-${randomBytes(3).toString('hex')}`;
    await core.createNamespace({ body: { metadata: { name: namespace } } });
    const localDir = await localStateDir(namespace);
    const cordoned: string[] = [];
    const setSchedulable = async (node: string, schedulable: boolean) => {
      const current = await core.readNode({ name: node });
      await core.replaceNode({
        name: node,
        body: { ...current, spec: { ...current.spec, unschedulable: !schedulable } },
      });
    };
    t.teardown(async () => {
      for (const node of cordoned) await setSchedulable(node, true).catch(() => undefined);
      await core.deleteNamespace({ name: namespace }).catch(() => undefined);
      // Volumes are cluster-wide: an agent the journey did not get to delete leaves its own.
      for (const pv of (await core.listPersistentVolume({ labelSelector: `agentyard.instance=${instance}` })).items)
        await core.deletePersistentVolume({ name: pv.metadata!.name! }).catch(() => undefined);
      await rm(localDir, { recursive: true, force: true });
    });

    const model = await startLocalProviders(t);
    const mailbox = await startMailServer(t);
    const platform = await startWholePlatform(
      {
        RUNTIME_DRIVER: 'kubernetes',
        RUNTIME_INSTANCE: instance,
        KUBERNETES_KUBECONFIG: kubeconfig,
        KUBERNETES_NAMESPACE: namespace,
        KUBERNETES_LOCAL_STORAGE_DIR: localDir,
        KUBERNETES_LOCAL_STORAGE_NODES: nodes.join(','),
        // The host reaches pods from the bridge and the pod networks' gateways.
        KUBERNETES_PLATFORM_CIDRS: '10.245.0.0/24,10.244.0.0/16',
        KUBERNETES_IMAGE_PULL_POLICY: 'Never',
        EDGE_AGENT_HOST: BRIDGE_HOST,
        AGENT_IMAGE: DEFAULT_AGENT_IMAGE,
        AGENT_READY_TIMEOUT_MS: '600000',
        OPENAI_BASE_URL: model.env.OPENAI_BASE_URL,
        OPENAI_API_KEY: model.env.OPENAI_API_KEY,
        SMTP_URL: mailbox.url,
        BILLING_PROVIDER: 'local',
        RATE_LIMITS: 'web-gateway=1000000',
      },
      { listenTimeoutMs: 180_000 },
    );
    t.teardown(() => platform.stop());
    t.equal(
      platform.agentUrl?.startsWith(`http://${BRIDGE_HOST}:`),
      true,
      "the edge's agent listener is on the bridge pods reach",
    );

    // 1. A new user, subscribed.
    const web = new WebClient(platform.webUrl, platform.env.PUBLIC_BASE_URL!);
    const email = uniqueEmail('kubernetes');
    const { verified } = await registerAndVerify(web, mailbox, email, 'a kubernetes journey password');
    t.equal(verified, 200, 'signed up and verified from the mail');
    t.equal(await payAtLocalCheckout(web, 'solo'), 303, 'subscribed to solo');

    // 2. Provisioned: its pod scheduled on a node, running.
    const asked = performance.now();
    const provisioned = await web.request('POST', '/api/agents/provision', { name: 'Helm' });
    t.equal(provisioned.status, 201, 'provisioning accepted');
    const id = ((await provisioned.json()) as { agent: { id: string } }).agent.id;
    const agent = async () => {
      const res = await web.request('GET', `/api/agents/${id}`);
      return res.status === 200
        ? ((await res.json()) as { agent: { status: string } }).agent.status
        : `HTTP ${res.status}`;
    };
    const settled = await observe(agent, (s) => !['pending', 'provisioning', 'deploying'].includes(s), {
      everyMs: 1000,
      deadlineMs: 900_000,
      what: 'the agent leaving provisioning',
    });
    const provisionMs = Math.round(performance.now() - asked);
    if (!t.equal(settled, 'running', 'the agent runs')) return;
    t.comment(`provisioning → running (the OpenClaw gateway ready in its pod): ${provisionMs} ms`);
    const name = `agent-${id}`;
    const pod = `${name}-0`;
    const first = await core.readNamespacedPod({ name: pod, namespace });
    const firstNode = first.spec!.nodeName!;
    t.ok(nodes.includes(firstNode), `its pod is scheduled on ${firstNode}`);
    const row = () =>
      systemDb()
        .selectFrom('agents')
        .select(['gateway_url', 'container_id'])
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
    t.same(
      await row(),
      { gateway_url: `http://${first.status!.podIP}:18789`, container_id: name },
      "the platform reaches it at its pod's address",
    );

    // 3. A chat answered through the platform's AI gateway (the pod calls the edge's agent listener).
    const chat = async (what: string) => {
      const res = await web.request(
        'POST',
        '/api/chat',
        { agentId: id, message: `Still there? (${what})` },
        { timeoutMs: 300_000 },
      );
      const body = (await res.json()) as { message?: { content: string } };
      t.equal(res.status, 200, `${what}: the agent answers`);
      t.equal(body.message?.content, 'Hello from the local provider', `${what}: with the model server's words`);
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
    cordoned.push(firstNode);
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
    const followed = await observe(row, (r) => r.gateway_url === `http://${second.status!.podIP}:18789`, {
      everyMs: 500,
      deadlineMs: 120_000,
      what: "the platform following the pod's new address",
    });
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

    // 6. Deleted from the web: nothing of it left in the namespace, nor its volume.
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
