import { openAgentSecret } from '@agentyard/agent-gateway';
import type { Keyring } from '@agentyard/crypto';
import { RuntimeError, type LogLine, type RuntimeDriver } from '@agentyard/runtime';
import type { AgentRow } from '../agents/agent-views.ts';
import { AgentWorkspaceErrors } from '../../errors.ts';
import { logRedactor } from './log-redaction.ts';

/** The redactor for `agent`'s output: its sealed tokens opened, plus every credential shape (its AI key is an `ag_` key). */
export function redactorFor(keyring: Keyring, agent: AgentRow): (text: string) => string {
  const open = (kind: 'gateway-token' | 'hooks-token', sealed: string | null) => {
    if (!sealed) return null;
    try {
      return openAgentSecret(keyring, agent.id, kind, sealed);
    } catch {
      return null;
    }
  };
  return logRedactor([
    open('gateway-token', agent.gateway_token_sealed),
    open('hooks-token', agent.hooks_token_sealed),
  ]);
}

const redacted =
  (redact: (text: string) => string) =>
  (line: LogLine): LogLine => ({ ...line, text: redact(line.text) });

/** The agent's last `lines` lines of output, redacted; none when it has no container. */
export async function agentLogHistory(
  driver: RuntimeDriver,
  keyring: Keyring,
  agent: AgentRow,
  lines: number,
): Promise<LogLine[]> {
  if (!driver.logs) throw AgentWorkspaceErrors.noLogs();
  if (!agent.container_id) return [];
  try {
    return (await driver.logs(agent.container_id, lines)).map(redacted(redactorFor(keyring, agent)));
  } catch (error) {
    // The container went away between the row and the engine: it printed nothing that is kept.
    if (error instanceof RuntimeError && (error.cause as { statusCode?: number } | undefined)?.statusCode === 404)
      return [];
    if (error instanceof RuntimeError) throw AgentWorkspaceErrors.engineFailed();
    throw error;
  }
}

/** New lines of the agent's output, redacted, until `signal` aborts; nothing when it has no container. */
export async function* followAgentLogs(
  driver: RuntimeDriver,
  keyring: Keyring,
  agent: AgentRow,
  signal: AbortSignal,
): AsyncGenerator<LogLine> {
  if (!agent.container_id) return;
  const redact = redacted(redactorFor(keyring, agent));
  for await (const line of driver.followLogs!(agent.container_id, signal)) yield redact(line);
}
