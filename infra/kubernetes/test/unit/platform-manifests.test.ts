import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { baseConfigSchema, repoRoot, SERVICE_NAMES, serviceListenAddress } from '@agentyard/config';
import type {
  V1Container,
  V1HorizontalPodAutoscaler,
  V1PodSpec,
  V1PriorityClass,
  V1Service,
} from '@kubernetes/client-node';
import { opsAddress } from '@agentyard/observability';
import { RESOURCES_BY_ALIAS } from '@agentyard/runtime';
import t from 'tap';
import type { TSchema } from 'typebox';
import { parse } from 'yaml';
import { agentsSettings } from '../../../../services/agents/src/config.ts';
import { aiSettings } from '../../../../services/ai/src/config.ts';
import { authSettings } from '../../../../services/auth/src/config.ts';
import { bridgeSettings } from '../../../../services/bridge/src/config.ts';
import { edgeSettings } from '../../../../services/edge/src/config.ts';
import { schedulerSettings } from '../../../../services/scheduler/src/config.ts';
import { traderSettings } from '../../../../services/trader/src/config.ts';
import {
  AGENTS_NAMESPACE,
  AGENTS_SERVICE_ACCOUNT,
  deployments,
  environmentOf,
  jobs,
  kustomizationObjects,
  LOCAL_STORAGE_DIR,
  ofKind,
  PLATFORM_DIR,
  PLATFORM_NAMESPACE,
  planClassOf,
  quotas,
  settingsOf,
} from '../platform-manifests.ts';

// The manifests kept true to docker-compose.yml and to the code (ports, probes, settings), without a
// cluster: infra/kubernetes/test/kubernetes/platform-manifests.test.ts has the API server judge them.
const objects = kustomizationObjects(PLATFORM_DIR);
const settings = settingsOf(objects);
const compose = parse(readFileSync(join(repoRoot, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
  services: Record<
    string,
    { command?: string[]; image?: string; build?: object; environment?: Record<string, string> }
  >;
};
const PLATFORM_IMAGE = /^\$\{PLATFORM_IMAGE/;
/** Compose runs the migration through a script it mounts (infra/docker/db-init.sh), which execs this. */
const MIGRATE = ['node', 'scripts/migrate.ts'];
const defaultOf = (schema: TSchema) => (schema as { default?: number }).default;
const isSecret = (schema: TSchema) => (schema as { secret?: unknown }).secret === true;
const secretSettings = new Set(
  [
    baseConfigSchema,
    agentsSettings,
    aiSettings,
    authSettings,
    bridgeSettings,
    edgeSettings,
    schedulerSettings,
    traderSettings,
  ].flatMap((schema) =>
    Object.entries(schema as Record<string, TSchema>)
      .filter(([, s]) => isSecret(s))
      .map(([key]) => key),
  ),
);
/** Settings holding credentials without being a Secret() setting: URLs with a password, the database roles' passwords. */
const CREDENTIALS = [
  'DATABASE_URL',
  'DATABASE_SYSTEM_URL',
  'DATABASE_ADMIN_URL',
  'REDIS_URL',
  'SMTP_URL',
  'OWNER_DB_PASSWORD',
  'APP_DB_PASSWORD',
  'SYSTEM_DB_PASSWORD',
];
const STABLE_SINCE_1_20 = [
  'v1',
  'apps/v1',
  'batch/v1',
  'rbac.authorization.k8s.io/v1',
  'scheduling.k8s.io/v1',
  'networking.k8s.io/v1',
  'autoscaling/v1',
];
const CLUSTER_SCOPED = ['Namespace', 'ClusterRole', 'ClusterRoleBinding', 'PriorityClass'];

const containerOf = (spec: V1PodSpec | undefined): V1Container => {
  if (spec?.containers.length !== 1) throw new Error('one container per pod');
  return spec.containers[0]!;
};
/** The process a command starts, as it names itself (its operations port, its drain setting). */
const processOf = (command: string[] | undefined) => {
  const match = /^services\/([a-z]+)\/src\/(main|worker)\.ts$/.exec(command?.[1] ?? '');
  return match ? (match[2] === 'main' ? match[1]! : `${match[1]}-worker`) : undefined;
};

t.test('every object is of an API stable from Kubernetes 1.20, in the namespace it belongs to', async (t) => {
  const all = kustomizationObjects(LOCAL_STORAGE_DIR);
  t.ok(all.length > objects.length, 'local-storage adds to the base');
  for (const { file, object } of all) {
    t.ok(
      STABLE_SINCE_1_20.includes(object.apiVersion ?? ''),
      `${file}: ${object.kind} ${object.metadata?.name} is ${object.apiVersion}`,
    );
    if (CLUSTER_SCOPED.includes(object.kind ?? ''))
      t.notOk(object.metadata?.namespace, `${object.kind} ${object.metadata?.name} is cluster-wide`);
    else
      t.ok(
        [PLATFORM_NAMESPACE, AGENTS_NAMESPACE].includes(object.metadata?.namespace ?? ''),
        `${object.kind} ${object.metadata?.name} names its namespace`,
      );
  }
  t.same(
    ofKind(objects, 'Namespace').map((n) => (n as { metadata: { name: string } }).metadata.name),
    [PLATFORM_NAMESPACE, AGENTS_NAMESPACE],
  );
});

t.test('every platform process of docker-compose.yml runs here, with the same command and image', async (t) => {
  const workloads = [...deployments(objects), ...jobs(objects)];
  const platformServices = Object.entries(compose.services).filter(([, s]) => PLATFORM_IMAGE.test(s.image ?? ''));
  t.ok(platformServices.length >= 12, 'compose has the services, their workers, the migration and the egress proxy');
  for (const [name, service] of platformServices) {
    const workload = workloads.find((w) => w.metadata?.name === name);
    if (!t.ok(workload, `${name} has a Deployment or Job`)) continue;
    const container = containerOf(workload!.spec?.template.spec);
    t.same(container.command, name === 'migrate' ? MIGRATE : service.command, `${name} runs what compose runs`);
    t.equal(container.image, 'agentyard/platform:latest', `${name} runs the platform image (infra/docker/Dockerfile)`);
    t.equal(workload!.kind, name === 'migrate' ? 'Job' : 'Deployment');
  }
  t.equal(workloads.length, platformServices.length, 'nothing more than compose runs');
  t.match(readFileSync(join(repoRoot, 'infra/docker/db-init.sh'), 'utf8'), /exec node scripts\/migrate\.ts/);
});

t.test('probes ask /readyz and /livez where each process serves them; Services point at its listeners', async (t) => {
  const services = ofKind<V1Service>(objects, 'Service');
  for (const deployment of deployments(objects)) {
    const name = deployment.metadata!.name!;
    const container = containerOf(deployment.spec?.template.spec);
    const env = environmentOf(container, settings);
    const portOf = (port: number | string | undefined) =>
      typeof port === 'number' ? port : container.ports?.find((p) => p.name === port)?.containerPort;
    const process = processOf(container.command);
    if (!process) {
      // The egress proxy serves no /livez: its probes open its proxy port.
      t.equal(name, 'egress');
      t.equal(portOf(container.readinessProbe?.tcpSocket?.port), Number(env.EGRESS_PROXY_PORT));
      t.equal(portOf(container.livenessProbe?.tcpSocket?.port), Number(env.EGRESS_PROXY_PORT));
      t.equal(env.EGRESS_LISTEN_HOST, '0.0.0.0');
      continue;
    }
    t.equal(name, process, `the Deployment is named as its process`);
    const ops = opsAddress(process, env);
    t.equal(ops.host, '0.0.0.0', `${name}: the operations listener is reachable by the kubelet`);
    t.equal(container.readinessProbe?.httpGet?.path, '/readyz', `${name} is ready by /readyz`);
    t.equal(
      portOf(container.readinessProbe?.httpGet?.port),
      ops.port,
      `${name}: /readyz on its operations port ${ops.port}`,
    );
    t.equal(container.livenessProbe?.httpGet?.path, '/livez', `${name} is alive by /livez`);
    t.equal(portOf(container.livenessProbe?.httpGet?.port), ops.port, `${name}: /livez on its operations port`);
    const listeners =
      name === 'edge'
        ? [
            [env.EDGE_WEB_HOST, defaultOf(edgeSettings.EDGE_WEB_PORT)],
            [env.EDGE_BACKEND_HOST, defaultOf(edgeSettings.EDGE_BACKEND_PORT)],
            [env.EDGE_AGENT_HOST, Number(env.EDGE_AGENT_PORT)],
          ]
        : (SERVICE_NAMES as string[]).includes(name)
          ? [Object.values(serviceListenAddress(name as (typeof SERVICE_NAMES)[number], env))]
          : [];
    const service = services.find((s) => s.metadata?.name === name);
    t.equal(Boolean(service), listeners.length > 0, `${name} has a Service when it has an HTTP app`);
    for (const [host, port] of listeners) {
      t.equal(host, '0.0.0.0', `${name} listens on the pod's network`);
      t.ok(
        service?.spec?.ports?.some((p) => portOf(p.targetPort) === port && p.port === port),
        `${name}'s Service reaches its listener on ${port}`,
      );
    }
    // Other services reach it where the settings say.
    if ((SERVICE_NAMES as string[]).includes(name))
      t.equal(settings[`${name.toUpperCase()}_URL`], `http://${name}.${PLATFORM_NAMESPACE}.svc:${listeners[0]![1]}`);
  }
});

t.test('every pod is hardened; only the agents processes get a service account token', async (t) => {
  for (const workload of [...deployments(objects), ...jobs(objects)]) {
    const name = workload.metadata!.name!;
    const pod = workload.spec!.template.spec!;
    const container = containerOf(pod);
    t.equal(pod.securityContext?.runAsNonRoot, true, `${name}: not root`);
    t.equal(pod.securityContext?.seccompProfile?.type, 'RuntimeDefault', `${name}: the runtime's seccomp profile`);
    t.equal(container.securityContext?.allowPrivilegeEscalation, false, `${name}: no privilege escalation`);
    t.equal(container.securityContext?.readOnlyRootFilesystem, true, `${name}: read-only root`);
    t.same(container.securityContext?.capabilities?.drop, ['ALL'], `${name}: no capabilities`);
    t.notOk(
      container.securityContext?.privileged || container.securityContext?.capabilities?.add,
      `${name}: nothing added`,
    );
    for (const what of ['requests', 'limits'] as const)
      t.ok(container.resources?.[what]?.cpu && container.resources?.[what]?.memory, `${name}: CPU and memory ${what}`);
    const agents = name === 'agents' || name === 'agents-worker';
    t.equal(pod.automountServiceAccountToken, agents, `${name}: ${agents ? 'the driver’s token' : 'no token'}`);
    t.equal(pod.serviceAccountName, agents ? AGENTS_SERVICE_ACCOUNT : undefined);
    // Writable places are volumes: /tmp, and the snapshots' default directory for the agents processes.
    t.ok(
      container.volumeMounts?.some((m) => m.mountPath === '/tmp'),
      `${name}: a writable /tmp`,
    );
  }
});

t.test('no secret in the files; each process gets the secrets compose gives it, from the Secret', async (t) => {
  t.same(ofKind(kustomizationObjects(LOCAL_STORAGE_DIR), 'Secret'), [], 'no Secret object is committed');
  for (const key of Object.keys(settings)) {
    t.notOk(secretSettings.has(key) || CREDENTIALS.includes(key), `${key} is not in the ConfigMap`);
    t.notMatch(settings[key]!, /:\/\/[^/@\s]*:[^/@\s]*@/, `${key} carries no password`);
  }
  const example = Object.fromEntries(
    readFileSync(join(PLATFORM_DIR, 'secrets.example.env'), 'utf8')
      .split('\n')
      .filter((line) => line && !line.startsWith('#'))
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );
  for (const [key, value] of Object.entries(example))
    t.ok(value === '' || /<[a-z ]+>/.test(value), `secrets.example.env: ${key} is empty or a placeholder`);
  for (const workload of [...deployments(objects), ...jobs(objects)]) {
    const name = workload.metadata!.name!;
    const container = containerOf(workload.spec!.template.spec);
    const given = (container.env ?? []).filter((v) => v.valueFrom?.secretKeyRef);
    const composeEnv = compose.services[name]?.environment ?? {};
    for (const variable of given) {
      const ref = variable.valueFrom!.secretKeyRef!;
      t.equal(ref.name, 'agentyard-secrets');
      t.equal(ref.key, variable.name);
      t.ok(ref.key in example, `${name}: ${ref.key} is in secrets.example.env`);
      t.ok(ref.key in composeEnv, `${name}: ${ref.key}, as compose gives it`);
    }
    for (const key of Object.keys(composeEnv).filter((k) => secretSettings.has(k) || CREDENTIALS.includes(k)))
      t.ok(
        given.some((v) => v.name === key),
        `${name}: ${key} from the Secret`,
      );
  }
});

t.test('a PriorityClass and a ResourceQuota per plan: the plan’s agents, each of its size', async (t) => {
  const classes = ofKind<V1PriorityClass>(objects, 'PriorityClass');
  t.equal(classes.length, Object.keys(RESOURCES_BY_ALIAS).length);
  for (const [alias, resources] of Object.entries(RESOURCES_BY_ALIAS)) {
    const name = planClassOf(alias);
    const priority = classes.find((c) => c.metadata?.name === name);
    t.ok(priority, `${name}`);
    t.equal(priority?.globalDefault, false);
    t.equal(priority?.preemptionPolicy, 'Never', `${alias}: agents never evict agents`);
    const quota = quotas(objects).find((q) => q.metadata?.name === name);
    if (!t.ok(quota, `quota ${name}`)) continue;
    t.equal(quota!.metadata?.namespace, AGENTS_NAMESPACE);
    t.same(quota!.spec?.scopeSelector?.matchExpressions, [
      { scopeName: 'PriorityClass', operator: 'In', values: [name] },
    ]);
    const hard = quota!.spec!.hard!;
    const pods = Number(hard.pods);
    t.ok(pods >= 1);
    const gib = (text: string) => Number(/^(\d+)Gi$/.exec(text)?.[1]) * 1024 ** 3;
    for (const key of ['requests.cpu', 'limits.cpu'])
      t.equal(Number(hard[key]), pods * resources.cpus, `${alias}: ${key} for ${pods} agents`);
    for (const key of ['requests.memory', 'limits.memory'])
      t.equal(gib(hard[key]!), pods * resources.memoryBytes, `${alias}: ${key} for ${pods} agents`);
  }
});

t.test('autoscaling on the stateless HTTP apps and the egress proxy, not on queue workers', async (t) => {
  const scalers = ofKind<V1HorizontalPodAutoscaler>(objects, 'HorizontalPodAutoscaler');
  const names = deployments(objects).map((d) => d.metadata!.name!);
  t.same(scalers.map((s) => s.spec.scaleTargetRef.name).sort(), names.filter((n) => !n.endsWith('-worker')).sort());
  for (const scaler of scalers) {
    t.equal(scaler.spec.scaleTargetRef.kind, 'Deployment');
    t.ok(scaler.spec.targetCPUUtilizationPercentage, `${scaler.metadata?.name} scales on CPU`);
    t.ok((scaler.spec.minReplicas ?? 1) >= 2, `${scaler.metadata?.name}: two at least`);
    const target = deployments(objects).find((d) => d.metadata?.name === scaler.spec.scaleTargetRef.name);
    t.ok(containerOf(target?.spec?.template.spec).resources?.requests?.cpu, 'CPU utilization is of the request');
  }
});
