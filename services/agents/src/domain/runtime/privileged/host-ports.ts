import { isUniqueViolation } from '@agentyard/db';
import type { SystemDb } from '@agentyard/db/system';
import { claimHostPort, type PortRange } from '@agentyard/runtime';
import { AgentErrors } from '../../../errors.ts';
import type { AgentRow } from '../../agents/agent-views.ts';

/** The agent's port: the one it holds, or a new one claimed under the unique constraint. */
export async function hostPortOf(
  db: SystemDb,
  ports: PortRange,
  agent: AgentRow,
  avoid: Set<number> = new Set(),
): Promise<number> {
  if (agent.host_port !== null && !avoid.has(agent.host_port)) return agent.host_port;
  const taken = new Set(
    (await db.selectFrom('agents').select('host_port').where('host_port', 'is not', null).execute()).map(
      (r) => r.host_port!,
    ),
  );
  for (const p of avoid) taken.add(p);
  return claimHostPort(ports, taken, async (port) => {
    try {
      const claimed = await db
        .updateTable('agents')
        .set({ host_port: port })
        .where('id', '=', agent.id)
        .executeTakeFirst();
      if (claimed.numUpdatedRows === 0n) throw AgentErrors.notFound();
      return true;
    } catch (error) {
      if (isUniqueViolation(error)) return false;
      throw error;
    }
  });
}
