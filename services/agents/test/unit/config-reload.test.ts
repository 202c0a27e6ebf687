import t from 'tap';
import {
  changedPaths,
  reloadKindOf,
  restartsGateway,
  watchesItsConfig,
} from '../../src/domain/gateway/config-reload.ts';

// How a saved configuration reaches a running agent, by OpenClaw 2026.9.6's own reload rules
// (dist/config-reload-plan-*.mjs): the longest matching prefix wins, and no rule means a restart.

t.test('the changed paths, key by key, arrays as a whole', async (t) => {
  t.same(
    changedPaths(
      { logging: { level: 'info' }, session: { resetTriggers: ['/new'] } },
      { logging: { level: 'debug' }, session: { resetTriggers: ['/new'] } },
    ),
    ['logging.level'],
  );
  t.same(changedPaths({ session: { resetTriggers: ['/new'] } }, { session: { resetTriggers: ['/new', '/reset'] } }), [
    'session.resetTriggers',
  ]);
  t.same(changedPaths({ a: 1 }, { a: 1, channels: { telegram: { enabled: true } } }), ['channels']);
  t.same(changedPaths({ x: { y: 1 } }, { x: { y: 1 } }), []);
});

t.test('what OpenClaw applies live and what restarts its gateway', async (t) => {
  for (const path of [
    'logging.level',
    'session.resetTriggers',
    'agents.defaults.model',
    'models.providers.agentyard.models',
    'channels.telegram.enabled',
    'channels.telegram.dmPolicy',
    'tools.deny',
    'skills.entries.weather',
    'messages.groupChat.mentionPatterns',
    'hooks.token',
    'gateway.http.endpoints.chatCompletions.enabled',
    'gateway.controlUi.allowedOrigins',
    'gateway.reload.mode',
  ])
    t.notOk(restartsGateway(path), `${path}: live`);
  for (const path of [
    'gateway.port',
    'gateway.bind',
    'gateway.auth.mode',
    'gateway.auth.token',
    'gateway.controlUi.basePath',
    'discovery.mdns',
    'secrets.egressProxy.url',
    'somethingNew',
  ])
    t.ok(restartsGateway(path), `${path}: a restart`);
  t.equal(reloadKindOf({ logging: { level: 'info' } }, { logging: { level: 'debug' } }), 'hot-reload');
  t.equal(
    reloadKindOf(
      { logging: { level: 'info' }, gateway: { port: 1 } },
      { logging: { level: 'debug' }, gateway: { port: 2 } },
    ),
    'restart',
    'one path needing a restart is enough',
  );
});

t.test('only images running this OpenClaw watch their config', async (t) => {
  t.ok(watchesItsConfig('localhost/agentyard-openclaw:2026.9.6'));
  t.ok(watchesItsConfig('ghcr.io/openclaw/openclaw:2026.9.6@sha256:abc'));
  t.ok(watchesItsConfig('/var/cache/agentyard/agent-image/openclaw-2026.9.6/node_modules/openclaw/openclaw.mjs'));
  t.notOk(watchesItsConfig('localhost/agentyard-openclaw:2026.10.1'), 'another version: its rules are not these');
  t.notOk(watchesItsConfig('localhost/agentyard-gateway-minimal:1'));
  t.notOk(watchesItsConfig('/work/infra/agent-image/minimal-gateway/server.mjs'));
  t.notOk(watchesItsConfig(null));
});
