import t from 'tap';
import { randomBytes } from 'node:crypto';
import { loadAgentsConfig } from '../../src/config.ts';

const secrets = {
  IDENTITY_SECRET: randomBytes(32).toString('hex'),
  ENCRYPTION_KEYS: `k1:${randomBytes(32).toString('base64')}`,
};

t.test('RUNTIME_DRIVER=kubernetes: selectable, its settings checked when the service starts', async (t) => {
  const env = {
    ...process.env,
    ...secrets,
    NODE_ENV: 'production',
    RUNTIME_DRIVER: 'kubernetes',
    KUBERNETES_PLATFORM_CIDRS: '10.245.0.0/24',
    KUBERNETES_STORAGE_CLASS: 'standard',
    AGENT_AI_GATEWAY_URL: 'http://10.245.0.1:3002',
  };
  const config = loadAgentsConfig(env);
  t.equal(config.RUNTIME_DRIVER, 'kubernetes', 'production accepts agents on a cluster');
  t.equal(config.KUBERNETES_NAMESPACE, 'agentyard-agents', 'their own namespace by default');
  t.throws(
    () => loadAgentsConfig({ ...env, KUBERNETES_PLATFORM_CIDRS: '' }),
    /RUNTIME_DRIVER=kubernetes: KUBERNETES_PLATFORM_CIDRS is needed/,
  );
  t.throws(
    () => loadAgentsConfig({ ...env, KUBERNETES_STORAGE_CLASS: '' }),
    /RUNTIME_DRIVER=kubernetes: set one of KUBERNETES_STORAGE_CLASS/,
  );
  t.throws(
    () => loadAgentsConfig({ ...env, AGENT_AI_GATEWAY_URL: 'http://ai.internal:3002' }),
    /KUBERNETES_AGENT_LISTENERS is needed/,
  );
  t.equal(
    loadAgentsConfig({
      ...env,
      AGENT_AI_GATEWAY_URL: 'http://ai.internal:3002',
      KUBERNETES_AGENT_LISTENERS: '10.0.0.5:3002',
    }).KUBERNETES_AGENT_LISTENERS,
    '10.0.0.5:3002',
  );
  t.throws(
    () => loadAgentsConfig({ ...env, KUBERNETES_NAMESPACE: 'Not_A_Name' }),
    /KUBERNETES_NAMESPACE/,
    'a namespace is a DNS label',
  );
  t.throws(() => loadAgentsConfig({ ...env, KUBERNETES_PLATFORM_CIDRS: 'everyone' }), /KUBERNETES_PLATFORM_CIDRS/);
  t.doesNotThrow(
    () => loadAgentsConfig({ ...env, RUNTIME_DRIVER: 'docker', KUBERNETES_PLATFORM_CIDRS: '' }),
    'other drivers do not need them',
  );
});
