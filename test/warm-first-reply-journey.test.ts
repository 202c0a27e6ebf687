import { readFile } from 'node:fs/promises';
import t from 'tap';
import { openAgentSecret, probeAgent } from '@agentyard/agent-gateway';
import { hashToken, parseKeyring } from '@agentyard/crypto';
import { AGENT_PORT, LABELS } from '@agentyard/runtime';
import { systemDb } from '@agentyard/testing';
import { startAgentJourney } from './support/agent-journey.ts';
import { noAgentContainers } from './support/containers.ts';
import { observe } from './support/journey.ts';

// Issue 30's fast first reply as a new owner meets it, on the platform as `npm start` runs it (every
// service and worker, the edge, the real OpenClaw image) with a warm pool whose gateway booted ahead
// with throwaway secrets of its own (RUNTIME_WARM_BOOT=booted): the owner provisions, the agent
// claims that gateway, which hot-reloads the agent's config without restarting, and the first chat
// through the edge is answered by the local model server through the AI gateway. The agent must
// hold its OWN gateway token, hooks token and AI key: the warm ones are refused once claimed.
// Heavy (~1.4 GB, a core for a minute while the warm gateway boots): one agent, removed at the end.
t.setTimeout(1_500_000);

interface GatewayConfig {
  gateway: { auth: { token: string } };
  hooks: { token: string };
  agents: { defaults: { model: string } };
  models: { providers: Record<string, { apiKey: string; headers: Record<string, string> }> };
}

t.test(
  "a new agent claims a booted warm gateway, which takes the agent's own config and answers its first chat",
  { skip: noAgentContainers },
  async (t) => {
    const journey = await startAgentJourney(t, {
      AGENT_PORT_RANGE: '30800-30899',
      RUNTIME_WARM_POOL: 'solo=1',
      RUNTIME_WARM_BOOT: 'booted',
      RATE_LIMITS: 'web-gateway=1000000',
    });
    const { docker, ours, model, platform } = journey;

    // The warm container, its gateway booted with a config of its own (read from the host, as only the platform can).
    const warm = await observe(
      async () => {
        const [c] = (await ours()).filter((c) => c.Labels?.[LABELS.warmBooted] === 'true' && c.State === 'running');
        const port = c?.Ports?.find((p) => p.PrivatePort === AGENT_PORT && p.PublicPort)?.PublicPort;
        return c && port && (await probeAgent(`http://127.0.0.1:${port}`, 2000)).ready === true
          ? { id: c.Id, url: `http://127.0.0.1:${port}` }
          : null;
      },
      (c) => c !== null,
      { everyMs: 1000, deadlineMs: 600_000, what: "a warm container's gateway answering /readyz" },
    );
    const warmInspect = await docker.getContainer(warm!.id).inspect();
    const configFile = `${warmInspect.Mounts.find((m) => m.Destination === '/run/agentyard')!.Source}/openclaw.json`;
    const warmConfig = JSON.parse(await readFile(configFile, 'utf8')) as GatewayConfig;
    const takes = async (token: string) =>
      (
        await fetch(`${warm!.url}/v1/models`, {
          headers: { authorization: `Bearer ${token}` },
          signal: AbortSignal.timeout(10_000),
        })
      ).status;
    t.equal(
      await takes(warmConfig.gateway.auth.token),
      200,
      'the warm gateway serves its own throwaway token before any claim',
    );

    const { web, userId: owner } = await journey.subscriber('first-reply', 'solo');
    const { id, settled } = await journey.provision(web, owner, 'Quick');
    t.equal(await settled(), 'running', 'the agent runs');

    const row = await systemDb()
      .selectFrom('agents')
      .select(['container_id', 'gateway_token_sealed', 'hooks_token_sealed', 'ai_key_hash'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    t.equal(row.container_id, warm!.id, 'it claimed the warm container');
    const keyring = parseKeyring(platform.env.ENCRYPTION_KEYS!);
    const gatewayToken = openAgentSecret(keyring, id, 'gateway-token', row.gateway_token_sealed!);
    const hooksToken = openAgentSecret(keyring, id, 'hooks-token', row.hooks_token_sealed!);
    const applied = JSON.parse(await readFile(configFile, 'utf8')) as GatewayConfig;
    t.equal(applied.gateway.auth.token, gatewayToken, "the gateway's config holds the agent's own gateway token");
    t.equal(applied.hooks.token, hooksToken, 'its own hooks token');
    t.equal(hashToken(applied.models.providers.agentyard!.apiKey), row.ai_key_hash, 'its own AI key');
    t.equal(
      applied.models.providers.agentyard!.headers['X-Agentyard-Agent'],
      id,
      'and its own id toward the AI gateway',
    );
    t.same(Object.keys(applied.models.providers), ['agentyard'], 'only its own provider');
    t.match(applied.agents.defaults.model, /^agentyard\//);
    t.not(gatewayToken, warmConfig.gateway.auth.token);
    t.not(hooksToken, warmConfig.hooks.token);
    t.same(
      Object.keys(warmConfig.models.providers),
      ['warmup'],
      'the warm gateway named its provider otherwise (its refused priming call cools that one down, not the agent’s)',
    );
    t.not(applied.models.providers.agentyard!.apiKey, warmConfig.models.providers.warmup!.apiKey);

    // Running means ready for a turn: the gateway already takes the agent's token and refuses the warm one.
    t.equal(await takes(gatewayToken), 200, "the agent's gateway token is taken as soon as it runs");
    t.equal(await takes(warmConfig.gateway.auth.token), 401, "the warm gateway's token is refused once claimed");
    const wake = async (token: string) =>
      (
        await fetch(`${warm!.url}/hooks/wake`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ text: 'ping', mode: 'next-heartbeat' }),
          signal: AbortSignal.timeout(10_000),
        })
      ).status;
    t.equal(await wake(warmConfig.hooks.token), 401, 'the warm hooks token is refused');
    t.equal(await wake(hooksToken), 200, "the agent's hooks token is taken");

    const answer = await web.request(
      'POST',
      '/api/chat',
      { agentId: id, message: 'hello there' },
      { timeoutMs: 240_000 },
    );
    t.equal(answer.status, 200, 'the first chat is answered');
    const delivered = await model.delivery((d) => JSON.stringify(d.body).includes('hello there'), 10_000);
    t.ok(delivered, 'through the AI gateway (which takes only keys it issued) to the provider');

    const after = await docker.getContainer(warm!.id).inspect();
    t.equal(
      after.State.StartedAt,
      warmInspect.State.StartedAt,
      'the gateway was never restarted: its config was hot-reloaded',
    );
    t.equal(after.State.Pid, warmInspect.State.Pid, 'the same process');
  },
);
