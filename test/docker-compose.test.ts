import t from 'tap';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { repoRoot } from '@agentyard/config';

// This keeps the file true to the repository; test/compose-deployment.test.ts (npm run test:deploy) runs it.
const text = readFileSync(join(repoRoot, 'docker-compose.yml'), 'utf8');
const compose = parse(text, { merge: true }) as {
  services: Record<
    string,
    {
      command?: string[];
      build?: { dockerfile?: string; context?: string };
      image?: string;
      depends_on?: object;
      environment?: Record<string, string>;
      healthcheck?: { test: string[] };
      ports?: string[];
      volumes?: string[];
      user?: string;
      networks?: string[];
    }
  >;
  networks: Record<string, { name?: string } | null>;
};
const services = readdirSync(join(repoRoot, 'services'), { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name);

t.test('every service, and every service worker, runs in docker-compose with its own entry point', async (t) => {
  for (const name of services) {
    for (const [entry, composeName] of [
      ['main.ts', name],
      ['worker.ts', `${name}-worker`],
    ] as const) {
      const file = `services/${name}/src/${entry}`;
      if (!existsSync(join(repoRoot, file))) {
        t.notOk(compose.services[composeName], `${composeName} has no ${file} to run`);
        continue;
      }
      const service = compose.services[composeName];
      t.ok(service, `${composeName} is in docker-compose.yml`);
      t.same(service?.command, ['node', file], `${composeName} runs ${file}`);
      t.equal(service?.build?.dockerfile, 'infra/docker/Dockerfile');
      t.ok(existsSync(join(repoRoot, service!.build!.dockerfile)));
    }
  }
});

t.test('data services, migration first, and no secret written into the file', async (t) => {
  t.ok(compose.services.postgres && compose.services.redis && compose.services.migrate);
  t.same(compose.services.auth?.depends_on, { migrate: { condition: 'service_completed_successfully' }, redis: { condition: 'service_healthy' } });
  for (const [name, service] of Object.entries(compose.services)) {
    for (const [key, value] of Object.entries(service.environment ?? {})) {
      if (/SECRET|KEY|PASSWORD/.test(key)) t.match(String(value), /\$\{[A-Z_]+(:\?[^}]*)?\}/, `${name}.${key} comes from the environment`);
    }
  }
});

t.test('every platform process is healthy by its /readyz; only the TLS proxy is published', async (t) => {
  for (const [name, service] of Object.entries(compose.services)) {
    if (!service.command?.[1]?.startsWith('services/')) continue;
    t.match(service.healthcheck?.test.join(' '), /127\.0\.0\.1:9000\/readyz/, `${name} is healthy when ready`);
    t.equal(service.environment?.OPS_PORT, '9000');
    t.notOk(service.ports, `${name} publishes no port`);
  }
  // biome-ignore lint/suspicious/noTemplateCurlyInString: compose's own variable syntax, not a template
  t.same(compose.services.caddy?.ports, ['${PUBLISH_ADDRESS:-0.0.0.0}:${HTTPS_PORT:-443}:443', '${PUBLISH_ADDRESS:-0.0.0.0}:${HTTP_PORT:-80}:80']);
  t.ok(existsSync(join(repoRoot, 'infra/caddy/Caddyfile')));
});

t.test('the agent plane: a shared network by name, the engine socket for the agents processes only, an image compose builds', async (t) => {
  const agentNetwork = compose.networks.agents?.name;
  // biome-ignore lint/suspicious/noTemplateCurlyInString: compose's own variable syntax, not a template
  t.equal(agentNetwork, '${AGENT_NETWORK:-agentyard-agents}', "the agents' network has a fixed name the driver can join");
  for (const name of ['agents', 'agents-worker', 'scheduler', 'scheduler-worker', 'edge']) {
    t.same(compose.services[name]?.networks, ['default', 'agents'], `${name} is on the agents' network`);
  }
  for (const name of ['agents', 'agents-worker']) {
    const service = compose.services[name]!;
    t.equal(service.environment?.RUNTIME_NETWORK, agentNetwork, `${name} records agents by name on that network`);
    // biome-ignore lint/suspicious/noTemplateCurlyInString: compose's own variable syntax, not a template
    t.equal(service.environment?.AGENT_AI_GATEWAY_URL, '${AGENT_AI_GATEWAY_URL:-http://edge:3002}', 'agents reach the edge by name');
    t.match(service.user, /^node:\$\{ENGINE_SOCKET_GID:\?/, `${name} runs as node with the socket's group`);
    t.match(service.volumes, [/:\/var\/run\/docker\.sock$/], `${name} has the engine socket`);
    t.match(service.depends_on, { 'agent-image': { condition: 'service_completed_successfully' } }, `${name} starts once the agent image is there`);
  }
  for (const [name, service] of Object.entries(compose.services)) {
    if (name !== 'agents' && name !== 'agents-worker')
      t.notOk(
        (service.volumes ?? []).some((v) => v.includes('docker.sock')),
        `${name} has no engine socket`,
      );
  }
  t.equal(compose.services['agent-image']?.build?.context, 'infra/agent-image', 'compose builds the agent image');
  t.equal(compose.services['agent-image']?.image, compose.services.agents?.environment?.AGENT_IMAGE, 'and the agents run that image');
  t.equal(compose.services.edge?.environment?.EDGE_AGENT_HOST, '0.0.0.0', 'the edge opens its agent listener');
  t.notMatch(text, /host\.docker\.internal/, 'nothing relies on host.docker.internal');
});
