// The whole platform with RUNTIME_DRIVER=kubernetes on the cluster infra/kubernetes/up.sh runs here,
// as the kubernetes tier's journeys start it: a namespace and volume folder of the file's own
// (removed at the end, with any node it cordoned uncordoned), every service and worker, the real
// OpenClaw image, a local model server, and a verified user subscribed to solo.
import type { Test } from 'tap';
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { DEFAULT_AGENT_IMAGE } from '@agentyard/runtime';
import {
  type Platform,
  startLocalProviders,
  startMailServer,
  startWholePlatform,
  systemDb,
  uniqueEmail,
} from '@agentyard/testing';
import {
  type ClusterClients,
  clusterClients,
  kubeconfig,
  localStateDir,
  readyNodes,
} from '../../libs/runtime/test/support/kubernetes-cluster.ts';
import { observe, payAtLocalCheckout, registerAndVerify, WebClient } from './journey.ts';

/** The host's address on the control plane's bridge: where pods on both nodes reach the platform. */
export const BRIDGE_HOST = '10.245.0.1';
/** What the local model server answers every chat with. */
export const MODEL_WORDS = 'Hello from the local provider';

export interface PlatformOnCluster extends ClusterClients {
  nodes: string[];
  namespace: string;
  localDir: string;
  platform: Platform;
  /** The subscribed user's web client. */
  web: WebClient;
  /** Cordons (false) or uncordons (true) a node; the file's cordons are lifted at the end. */
  setSchedulable: (node: string, schedulable: boolean) => Promise<void>;
  /** Provisions an agent from the web and waits until it leaves provisioning: its id, status and the time it took. */
  provision: (name: string) => Promise<{ id: string; status: string; ms: number }>;
  /** The agent's status as its owner reads it (or `HTTP <status>`). */
  status: (id: string) => Promise<string>;
  /** The agent's row as the platform keeps it: where it reaches the agent, and which StatefulSet it is. */
  row: (id: string) => Promise<{ gateway_url: string | null; container_id: string | null; image: string | null }>;
  /** A chat from the web: its status and the agent's words. */
  chat: (id: string, message: string) => Promise<{ status: number; content?: string }>;
}

/**
 * Starts the platform on the cluster with `env` over the tier's settings; null (after a failed
 * check) when the cluster has fewer than two Ready nodes.
 */
export async function platformOnCluster(
  t: Test,
  who: string,
  env: NodeJS.ProcessEnv = {},
): Promise<PlatformOnCluster | null> {
  const clients = clusterClients();
  const { core } = clients;
  const nodes = await readyNodes(core);
  if (!t.ok(nodes.length >= 2, `two Ready nodes (${nodes.join(', ')})`)) return null;

  const namespace = `agentyard-journey-${randomBytes(4).toString('hex')}`;
  const instance = `k8s-${randomBytes(3).toString('hex')}`;
  await core.createNamespace({ body: { metadata: { name: namespace } } });
  const localDir = await localStateDir(namespace);
  const cordoned = new Set<string>();
  const setSchedulable = async (node: string, schedulable: boolean) => {
    const current = await core.readNode({ name: node });
    await core.replaceNode({
      name: node,
      body: { ...current, spec: { ...current.spec, unschedulable: !schedulable } },
    });
    if (schedulable) cordoned.delete(node);
    else cordoned.add(node);
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
      ...env,
    },
    { listenTimeoutMs: 180_000 },
  );
  t.teardown(() => platform.stop());
  t.equal(
    platform.agentUrl?.startsWith(`http://${BRIDGE_HOST}:`),
    true,
    "the edge's agent listener is on the bridge pods reach",
  );

  const web = new WebClient(platform.webUrl, platform.env.PUBLIC_BASE_URL!);
  const { verified } = await registerAndVerify(web, mailbox, uniqueEmail(who), `a ${who} password`);
  t.equal(verified, 200, 'signed up and verified from the mail');
  t.equal(await payAtLocalCheckout(web, 'solo'), 303, 'subscribed to solo');

  const status = async (id: string) => {
    const res = await web.request('GET', `/api/agents/${id}`);
    return res.status === 200
      ? ((await res.json()) as { agent: { status: string } }).agent.status
      : `HTTP ${res.status}`;
  };
  return {
    ...clients,
    nodes,
    namespace,
    localDir,
    platform,
    web,
    setSchedulable,
    status,
    async provision(name) {
      const asked = performance.now();
      const provisioned = await web.request('POST', '/api/agents/provision', { name });
      t.equal(provisioned.status, 201, 'provisioning accepted');
      const id = ((await provisioned.json()) as { agent: { id: string } }).agent.id;
      const settled = await observe(
        () => status(id),
        (s) => !['pending', 'provisioning', 'deploying'].includes(s),
        {
          everyMs: 1000,
          deadlineMs: 900_000,
          what: 'the agent leaving provisioning',
        },
      );
      return { id, status: settled, ms: Math.round(performance.now() - asked) };
    },
    row: (id) =>
      systemDb()
        .selectFrom('agents')
        .select(['gateway_url', 'container_id', 'image'])
        .where('id', '=', id)
        .executeTakeFirstOrThrow(),
    async chat(id, message) {
      const res = await web.request('POST', '/api/chat', { agentId: id, message }, { timeoutMs: 300_000 });
      const body = (await res.json().catch(() => ({}))) as { message?: { content: string } };
      return { status: res.status, ...(body.message ? { content: body.message.content } : {}) };
    },
  };
}
