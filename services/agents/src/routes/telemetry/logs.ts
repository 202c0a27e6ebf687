import { agentWorkspaceRoutes as spec, fastifyRoute } from '@agentyard/proto-schemas';
import { eventStreams, KEEP_ALIVE_MS, type ServiceApp } from '@agentyard/http';
import type { Keyring } from '@agentyard/crypto';
import type { RuntimeDriver } from '@agentyard/runtime';
import type { AgentRow } from '../../domain/agents/agent-views.ts';
import { getAgent } from '../../domain/agents/agents.ts';
import { agentLogHistory, followAgentLogs } from '../../domain/telemetry/agent-logs.ts';
import { AgentWorkspaceErrors } from '../../errors.ts';

export default async function logRoutes(
  app: ServiceApp,
  {
    driver,
    keyring,
    hibernation,
  }: {
    driver: RuntimeDriver;
    keyring: Keyring;
    hibernation: { reach(agent: AgentRow): Promise<AgentRow>; hold(agentId: string): Promise<() => void> };
  },
) {
  const openStream = eventStreams(app);
  app.route({
    ...fastifyRoute(spec.logHistory),
    handler: async (request) => {
      const agent = await request.asUser((trx) => getAgent(trx, request.params.agentId));
      return { agentId: agent.id, lines: await agentLogHistory(driver, keyring, agent, request.query.lines ?? 200) };
    },
  });

  app.route({
    ...fastifyRoute(spec.logStream),
    handler: async (request, reply) => {
      // Someone watching the agent's output needs it awake, and keeps it so while watching.
      const agent = await hibernation.reach(await request.asUser((trx) => getAgent(trx, request.params.agentId)));
      if (!driver.followLogs) throw AgentWorkspaceErrors.noLogs();
      const stream = openStream(reply, { keepAliveMs: KEEP_ALIVE_MS, headers: { 'x-request-id': request.id } });
      const release = await hibernation.hold(agent.id);
      if (stream.left.aborted) release();
      else stream.left.addEventListener('abort', release, { once: true });
      try {
        for await (const line of followAgentLogs(driver, keyring, agent, stream.left)) stream.send('line', line);
      } catch (error) {
        request.log.warn({ err: error, agentId: agent.id }, 'agent log stream broke off');
        stream.send('error', { error: "The container engine stopped sending the agent's output" });
      }
      stream.end();
    },
  });
}
