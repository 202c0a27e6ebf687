import { agentWorkspaceRoutes as spec, fastifyRoute } from '@agentyard/proto-schemas';
import type { ServiceApp } from '@agentyard/http';
import type { Keyring } from '@agentyard/crypto';
import type { RuntimeDriver } from '@agentyard/runtime';
import { getAgent } from '../../domain/agents/agents.ts';
import { agentLogHistory, followAgentLogs } from '../../domain/agent-workspace/agent-logs.ts';
import { AgentWorkspaceErrors } from '../../domain/agent-workspace/errors.ts';
import { eventStreams } from './event-stream.ts';

export default async function logRoutes(app: ServiceApp, { driver, keyring }: { driver: RuntimeDriver; keyring: Keyring }) {
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
      const agent = await request.asUser((trx) => getAgent(trx, request.params.agentId));
      if (!driver.followLogs) throw AgentWorkspaceErrors.noLogs();
      const stream = openStream(request, reply);
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
