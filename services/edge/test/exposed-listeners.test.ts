import t from 'tap';
import { loadEdgeConfig } from '../src/config.ts';
import { agentListenerEnv } from '../../../scripts/lib/processes.ts';

// This run's settings (its secrets) without NODE_ENV or any listener address: each case sets its own.
const {
  NODE_ENV: _nodeEnv,
  EDGE_WEB_HOST: _web,
  EDGE_BACKEND_HOST: _backend,
  EDGE_AGENT_HOST: _agent,
  EDGE_EXPOSED_LISTENERS: _exposed,
  ...base
} = process.env;
const load = (env: Record<string, string>) => loadEdgeConfig({ ...base, ...env });

t.test(
  'outside production the edge refuses to listen on a non-loopback address, NODE_ENV unset included',
  async (t) => {
    t.throws(
      () => load({ EDGE_WEB_HOST: '0.0.0.0' }),
      {
        name: /^ConfigError$/,
        message: /^Refusing to listen on 0\.0\.0\.0 \(web\): NODE_ENV is development, not production/,
      },
      'NODE_ENV unset is development',
    );
    t.throws(
      () => load({ EDGE_WEB_HOST: '0.0.0.0' }),
      /Set NODE_ENV=production, or name the listener in EDGE_EXPOSED_LISTENERS/,
      'and the message says what to do',
    );
    t.throws(
      () => load({ NODE_ENV: 'test', EDGE_BACKEND_HOST: '192.0.2.7' }),
      /Refusing to listen on 192\.0\.2\.7 \(backend\): NODE_ENV is test/,
    );
    t.throws(() => load({ NODE_ENV: 'development', EDGE_AGENT_HOST: '::' }), /Refusing to listen on :: \(agent\)/);
    t.throws(
      () => load({ EDGE_WEB_HOST: '0.0.0.0', EDGE_AGENT_HOST: '192.0.2.7', EDGE_EXPOSED_LISTENERS: 'agent' }),
      /Refusing to listen on 0\.0\.0\.0 \(web\):/,
      'naming one listener exposes that one only',
    );
  },
);

t.test(
  'loopback always; other addresses in production or where named; npm start names its agent listener',
  async (t) => {
    for (const host of ['127.0.0.1', '127.0.0.2', 'localhost', '::1', '[::1]'])
      t.equal(load({ EDGE_WEB_HOST: host, EDGE_BACKEND_HOST: host }).EDGE_WEB_HOST, host, `${host} is loopback`);
    t.equal(
      load({
        NODE_ENV: 'production',
        EDGE_WEB_HOST: '0.0.0.0',
        EDGE_BACKEND_HOST: '0.0.0.0',
        EDGE_AGENT_HOST: '0.0.0.0',
      }).EDGE_AGENT_HOST,
      '0.0.0.0',
      'production serves any address',
    );
    t.equal(
      load({ EDGE_AGENT_HOST: '192.0.2.7', EDGE_EXPOSED_LISTENERS: 'agent' }).EDGE_AGENT_HOST,
      '192.0.2.7',
      'a named listener is served',
    );
    t.equal(
      load(agentListenerEnv('192.0.2.7', 3002)).EDGE_AGENT_HOST,
      '192.0.2.7',
      "npm start's agent listener on the host's own address (what agents in Podman reach)",
    );
  },
);
