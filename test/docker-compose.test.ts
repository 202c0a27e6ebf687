import t from 'tap';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { repoRoot } from '@agentyard/config';

// No container engine can run compose here; this keeps the file true to the repository.
const compose = parse(readFileSync(join(repoRoot, 'docker-compose.yml'), 'utf8'), { merge: true }) as { services: Record<string, { command?: string[]; build?: { dockerfile: string }; depends_on?: object; environment?: Record<string, string>; healthcheck?: { test: string[] }; ports?: string[] }> };
const services = readdirSync(join(repoRoot, 'services'), { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name);

t.test('every service, and every service worker, runs in docker-compose with its own entry point', async (t) => {
  for (const name of services) {
    for (const [entry, composeName] of [['main.ts', name], ['worker.ts', `${name}-worker`]] as const) {
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
  t.same(compose.services.caddy?.ports, ['${HTTPS_PORT:-443}:443', '${HTTP_PORT:-80}:80']);
  t.ok(existsSync(join(repoRoot, 'infra/caddy/Caddyfile')));
});
