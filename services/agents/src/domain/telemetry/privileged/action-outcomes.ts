import { sql } from '@agentyard/db';
import type { SystemDb } from '@agentyard/db/system';
import type { AgentActionOutcome, ReportOutcome } from '../../runtime/agent-actions.ts';
import { AGENT_STATUS_CHANNEL } from '../status-events.ts';

/**
 * Tells the owner's event streams how a web operation ended, on the status channel (a restart
 * changes no status, so the table's trigger says nothing): an `agent-status` event with its
 * current status, `action`, `outcome` and, when it failed, `error` in words. System connection:
 * the worker reports for every user.
 */
export function actionOutcomes(db: SystemDb): ReportOutcome {
  return async (outcome: AgentActionOutcome) => {
    const payload = JSON.stringify({ ...outcome, previousStatus: outcome.status, at: new Date().toISOString() });
    await sql`select pg_notify(${AGENT_STATUS_CHANNEL}, ${payload})`.execute(db);
  };
}
