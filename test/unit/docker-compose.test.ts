// biome-ignore-all lint/suspicious/noTemplateCurlyInString: compose's own `${VAR:-default}` syntax fills these strings, not templates
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { baseConfigSchema, productionSecrets, repoRoot } from '@agentyard/config';
import { PEER_ALIAS_LABEL, PEER_LABEL } from '@agentyard/runtime';
import t from 'tap';
import type { TSchema } from 'typebox';
import { parse } from 'yaml';

// This keeps the file true to the repository; test/deploy/compose-deployment.test.ts (npm run test:deploy) runs it.
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
      labels?: Record<string, string>;
      env_file?: unknown;
    }
  >;
  networks: Record<string, { name?: string; internal?: boolean } | null>;
};
/** A setting the config schemas mark secret (libs/config `Secret`). */
const isSecret = (schema: TSchema) => (schema as { secret?: unknown }).secret === true;
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
      t.ok(existsSync(join(repoRoot, service?.build?.dockerfile ?? 'missing')));
    }
  }
});

t.test('data services, migration first, and no secret written into the file', async (t) => {
  t.ok(compose.services.postgres && compose.services.redis && compose.services.migrate);
  t.same(compose.services.auth?.depends_on, {
    migrate: { condition: 'service_completed_successfully' },
    redis: { condition: 'service_healthy' },
  });
  for (const [name, service] of Object.entries(compose.services)) {
    for (const [key, value] of Object.entries(service.environment ?? {})) {
      if (/SECRET|KEY|PASSWORD/.test(key))
        t.match(String(value), /\$\{[A-Z][A-Z0-9_]*(:\?[^}]*)?\}/, `${name}.${key} comes from the environment`);
    }
  }
});

t.test('every platform process is healthy by its /readyz; only the TLS proxy is published', async (t) => {
  for (const [name, service] of Object.entries(compose.services)) {
    if (!service.command?.[1]?.startsWith('services/')) continue;
    t.match(
      service.healthcheck?.test.join(' '),
      /'http:\/\/'\+process\.env\.OPS_HOST\+':9000\/readyz'/,
      `${name} is healthy when ready`,
    );
    t.equal(service.environment?.OPS_PORT, '9000');
    t.notOk(service.ports, `${name} publishes no port`);
  }
  t.same(compose.services.caddy?.ports, [
    '${PUBLISH_ADDRESS:-0.0.0.0}:${HTTPS_PORT:-443}:443',
    '${PUBLISH_ADDRESS:-0.0.0.0}:${HTTP_PORT:-80}:80',
  ]);
  t.ok(existsSync(join(repoRoot, 'infra/caddy/Caddyfile')));
});

t.test(
  'the agent plane: a shared network by name, the engine socket for the agents processes only, an image compose builds',
  async (t) => {
    const agentNetwork = compose.networks.agents?.name;
    t.equal(
      agentNetwork,
      '${AGENT_NETWORK:-agentyard-agents}',
      "the agents' network has a fixed name the driver can join",
    );
    for (const name of ['agents', 'agents-worker']) {
      const service = compose.services[name]!;
      t.equal(service.environment?.RUNTIME_NETWORK, agentNetwork, `${name} records agents by name on that network`);
      t.equal(
        service.environment?.AGENT_AI_GATEWAY_URL,
        '${AGENT_AI_GATEWAY_URL:-http://egress:3002}',
        "agents reach the edge's agent listener through the egress relay",
      );
      t.equal(
        service.environment?.RUNTIME_EGRESS_PROXY,
        'http://egress:3128',
        'and the internet through the egress proxy',
      );
      t.notOk(service.environment?.RUNTIME_EGRESS_UNCONFINED, 'the production egress check is not opted out of');
      t.match(service.user, /^node:\$\{ENGINE_SOCKET_GID:\?/, `${name} runs as node with the socket's group`);
      t.match(service.volumes, [/:\/var\/run\/docker\.sock$/], `${name} has the engine socket`);
      t.has(
        service.depends_on,
        { 'agent-image': { condition: 'service_completed_successfully' } },
        `${name} starts once the agent image is there`,
      );
    }
    for (const [name, service] of Object.entries(compose.services)) {
      if (name !== 'agents' && name !== 'agents-worker')
        t.notOk(
          (service.volumes ?? []).some((v) => v.includes('docker.sock')),
          `${name} has no engine socket`,
        );
    }
    t.equal(compose.services['agent-image']?.build?.context, 'infra/agent-image', 'compose builds the agent image');
    t.equal(
      compose.services['agent-image']?.image,
      compose.services.agents?.environment?.AGENT_IMAGE,
      'and the agents run that image',
    );
    t.notMatch(text, /host\.docker\.internal/, 'nothing relies on host.docker.internal');
  },
);

// Issue 27 (N4, N8): agents reached every listener of the edge and every operations listener on a
// flat bridge with a way out to anywhere, and the edge believed X-Forwarded-For from any private address.
t.test(
  'networks: agents on an internal network with the egress proxy as the only way out; no platform listener on it',
  async (t) => {
    t.equal(compose.networks.agents?.internal, true, "the agents' network is internal: no route out");
    t.equal(compose.networks.proxy?.internal, true, "Caddy's network to the edge is internal");
    const networksOf = (name: string) => compose.services[name]?.networks ?? ['default'];
    const expected: Record<string, string[]> = {
      agents: ['default', 'agents'],
      'agents-worker': ['default', 'agents'],
      'scheduler-worker': ['default', 'agents'],
      egress: ['default', 'agents'],
      edge: ['default', 'proxy'],
      caddy: ['proxy', 'public'],
    };
    for (const name of Object.keys(compose.services))
      t.same(
        networksOf(name),
        expected[name] ?? ['default'],
        `${name} is on ${(expected[name] ?? ['default']).join(' and ')}`,
      );
    t.notOk(
      networksOf('edge').includes('agents'),
      "the edge's web, backend and operations listeners are not on the agents' network",
    );
    // A process on two networks would listen on both with 0.0.0.0: each listener names its network instead.
    // The egress proxy alone listens on every address: each agent's network joins it after it started.
    for (const [name, service] of Object.entries(compose.services)) {
      const env = service.environment ?? {};
      if (name === 'egress') continue;
      for (const [key, value] of Object.entries(env))
        t.not(value, '0.0.0.0', `${name}.${key} does not listen on every network`);
      if (!service.command?.[1]?.startsWith('services/')) continue;
      t.equal(
        env.NODE_OPTIONS,
        '--import=/app/infra/docker/listen-addresses.ts',
        `${name} resolves its listen addresses at start`,
      );
      const listeners = Object.entries(env).filter(([key]) => /_HOST$/.test(key) && key !== 'DOCKER_HOST');
      t.ok(listeners.length > 0, `${name} names where it listens`);
      for (const [key, value] of listeners) {
        const internal = name === 'edge' && key === 'EDGE_WEB_HOST';
        t.equal(
          value,
          internal ? '@internal-address' : '@default-route-address',
          `${name}.${key} listens on its ${internal ? 'internal' : 'platform'} network only`,
        );
      }
    }
    t.equal(
      compose.services.agents?.environment?.OPS_HOST,
      '@default-route-address',
      "the operations listener is off the agents' network",
    );
    // Each agent has a network of its own (libs/runtime agent-networks.ts): these join every one, nothing else does.
    const peers = Object.entries(compose.services)
      .filter(([, service]) => service.labels?.[PEER_LABEL])
      .map(([name]) => name)
      .sort();
    t.same(
      peers,
      ['agents', 'agents-worker', 'egress', 'scheduler-worker'],
      "the egress proxy and the gateways' callers are the peers of every agent's network",
    );
    for (const name of peers)
      t.equal(
        compose.services[name]!.labels![PEER_LABEL],
        '${RUNTIME_INSTANCE:-agentyard}',
        `${name} is a peer of this instance's agents`,
      );
    t.equal(
      compose.services.egress?.labels?.[PEER_ALIAS_LABEL],
      'egress',
      'where agents find the egress proxy as egress',
    );
    t.equal(
      compose.services.egress?.environment?.EGRESS_LISTEN_HOST,
      '0.0.0.0',
      'which listens on every network it joins',
    );
    t.ok(
      existsSync(join(repoRoot, 'infra/docker/listen-addresses.ts')) &&
        existsSync(join(repoRoot, 'infra/egress-proxy/egress-proxy.ts')),
    );
    const egress = compose.services.egress!;
    t.same(
      egress.command,
      ['node', 'infra/egress-proxy/egress-proxy.ts'],
      'the egress proxy runs from the platform image',
    );
    t.equal(egress.image, compose.services.edge?.image);
    t.equal(
      egress.environment?.EGRESS_RELAYS,
      `3002=edge:${compose.services.edge?.environment?.EDGE_AGENT_PORT}`,
      "it relays to the edge's agent listener",
    );
    t.equal(egress.environment?.EGRESS_ALLOWED_PORTS, '${EGRESS_ALLOWED_PORTS:-80,443}');
    t.equal(
      egress.environment?.EGRESS_GRANT_KEY,
      compose.services.agents?.environment?.EGRESS_GRANT_KEY,
      "it checks agents' egress grants with the agents service's key",
    );
  },
);

t.test(
  "the edge believes X-Forwarded-For only from Caddy's network, where Caddy is the only other member",
  async (t) => {
    const edge = compose.services.edge!.environment!;
    t.equal(edge.TRUST_PROXY, '@internal-subnet', 'trusted: the proxy network, not every private address');
    t.notMatch(text, /uniquelocal|loopback,|TRUST_PROXY:\s*\$\{/, 'no broad or operator-widened trust');
    t.equal(edge.EDGE_WEB_HOST, '@internal-address', 'the web listener is on that network only');
    const members = Object.entries(compose.services).filter(([, s]) => (s.networks ?? ['default']).includes('proxy'));
    t.same(members.map(([name]) => name).sort(), ['caddy', 'edge']);
    t.match(readFileSync(join(repoRoot, 'infra/caddy/Caddyfile'), 'utf8'), /reverse_proxy edge:3000/);
  },
);

// Issue 27 (N15): every container got every secret, and Redis had no password.
t.test('each container gets only the secrets its own process reads; Redis requires a password', async (t) => {
  const schemaOf = async (service: string): Promise<Record<string, TSchema>> => {
    const module = (await import(join(repoRoot, 'services', service, 'src', 'config.ts'))) as Record<string, unknown>;
    const settings = Object.entries(module).find(([key]) => key.endsWith('Settings'))?.[1] as Record<string, TSchema>;
    return { ...baseConfigSchema, ...settings };
  };
  const secretNames = new Set<string>([...Object.keys(productionSecrets()), 'SMTP_URL']);
  const platform = Object.entries(compose.services).filter(([, s]) => s.command?.[1]?.startsWith('services/'));
  const schemas = new Map<string, Record<string, TSchema>>();
  for (const [, service] of platform) {
    const owner = service.command![1]!.split('/')[1]!;
    if (!schemas.has(owner)) schemas.set(owner, await schemaOf(owner));
    for (const [key, schema] of Object.entries(schemas.get(owner)!)) if (isSecret(schema)) secretNames.add(key);
  }
  t.ok(secretNames.has('REDIS_PASSWORD'), '`npm run secrets` generates the Redis password');
  const SYSTEM_DB = [
    'agents',
    'agents-worker',
    'ai',
    'auth',
    'auth-worker',
    'bridge',
    'bridge-worker',
    'scheduler-worker',
  ];
  const secretsReferenced = (env: Record<string, string>) =>
    new Set(
      Object.values(env).flatMap((v) =>
        [...String(v).matchAll(/\$\{([A-Z][A-Z0-9_]*)/g)].map((m) => m[1]!).filter((n) => secretNames.has(n)),
      ),
    );
  for (const [name, service] of Object.entries(compose.services)) {
    t.notOk(service.env_file, `${name} reads no shared env file`);
    const env = service.environment ?? {};
    let allowed: string[];
    if (service.command?.[1]?.startsWith('services/')) {
      const schema = schemas.get(service.command[1].split('/')[1]!)!;
      const required = Object.entries(schema).filter(
        ([key, s]) => isSecret(s) && (s as { '~optional'?: boolean })['~optional'] !== true && key in env,
      );
      for (const [key, s] of Object.entries(schema))
        if (isSecret(s) && (s as { '~optional'?: boolean })['~optional'] !== true)
          t.ok(key in env, `${name} has ${key}, which its config requires`);
      t.ok(required.length > 0);
      allowed = [
        ...Object.keys(schema).filter((key) => isSecret(schema[key]!) && key in env),
        'APP_DB_PASSWORD',
        ...(SYSTEM_DB.includes(name) ? ['SYSTEM_DB_PASSWORD'] : []),
        ...(env.REDIS_URL ? ['REDIS_PASSWORD'] : []),
        ...(name === 'auth-worker' ? ['SMTP_URL'] : []),
      ];
      for (const key of Object.keys(env))
        if (secretNames.has(key)) t.ok(key in schema, `${name}.${key}: a secret its config declares`);
      t.equal(
        'DATABASE_SYSTEM_URL' in env,
        SYSTEM_DB.includes(name),
        `${name} ${SYSTEM_DB.includes(name) ? 'has' : 'has no'} the system (BYPASSRLS) database role`,
      );
      if (env.REDIS_URL)
        t.equal(env.REDIS_URL, 'redis://:${REDIS_PASSWORD}@redis:6379', `${name} authenticates to Redis`);
    } else {
      allowed =
        {
          postgres: ['POSTGRES_PASSWORD'],
          redis: ['REDIS_PASSWORD'],
          migrate: ['POSTGRES_PASSWORD', 'OWNER_DB_PASSWORD', 'APP_DB_PASSWORD', 'SYSTEM_DB_PASSWORD'],
          egress: ['EGRESS_GRANT_KEY'],
        }[name] ?? [];
    }
    t.same(
      [...secretsReferenced(env)].filter((n) => !allowed.includes(n)),
      [],
      `${name} gets no secret it does not read`,
    );
  }
  t.equal(compose.services.edge?.environment?.INTERNAL_API_KEY !== undefined, true, 'the edge checks backend keys');
  t.same(
    Object.entries(compose.services)
      .filter(([, s]) => s.environment?.SESSION_SECRET)
      .map(([n]) => n),
    ['auth', 'auth-worker'],
    'only auth has the session secret',
  );
  t.notOk(compose.services.trader?.environment?.REDIS_URL, 'the trader, which uses no Redis, has no Redis password');
  const redis = compose.services.redis!;
  t.match(
    redis.environment?.REDIS_PASSWORD,
    /^\$\{REDIS_PASSWORD:\?/,
    'compose refuses to start Redis without a password',
  );
  t.match(
    (redis.command ?? []).join(' '),
    /requirepass %s.*"\$\$REDIS_PASSWORD".*redis-server .* -$/,
    'Redis requires it (read from stdin, on no command line)',
  );
  t.equal(redis.environment?.REDISCLI_AUTH, '${REDIS_PASSWORD}', 'and its healthcheck authenticates');
  t.match(readFileSync(join(repoRoot, '.env.example'), 'utf8'), /^REDIS_PASSWORD=$/m, '.env.example lists it');
});
