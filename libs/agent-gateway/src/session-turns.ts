import { fetchWithTimeout } from '@agentyard/http';
import { AGENT_ANSWER_LIMIT_BYTES, AgentGatewayError, readAgentAnswer } from './client.ts';

/**
 * How a turn started through the hooks (`POST /hooks/agent`) ended, read from the agent's own
 * transcript: the hooks answer as soon as they accept a prompt, so the turn's end and its answer are
 * found afterwards in the session the prompt was threaded into, through the gateway's tools
 * (`POST /tools/invoke` with the gateway token: `sessions_list`, `sessions_history`).
 */
export interface GatewayToolTarget {
  baseUrl: string;
  gatewayToken: string;
}

export type TurnOutcome =
  | { finished: false }
  | { finished: true; ok: true; reply: string; endedAt: Date | null }
  | { finished: true; ok: false; error: string; endedAt: Date | null };

const record = (v: unknown): Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
const dateOf = (v: unknown): Date | null => {
  if (typeof v !== 'number' && typeof v !== 'string') return null;
  const date = new Date(v);
  return Number.isNaN(date.getTime()) ? null : date;
};

/** One gateway tool's `details`, or an AgentGatewayError saying why not. */
export async function invokeGatewayTool(
  target: GatewayToolTarget,
  tool: string,
  args: Record<string, unknown>,
  timeoutMs: number,
  limitBytes = AGENT_ANSWER_LIMIT_BYTES,
): Promise<Record<string, unknown>> {
  let response: Response;
  try {
    response = await fetchWithTimeout(new URL('/tools/invoke', target.baseUrl), {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${target.gatewayToken}` },
      body: JSON.stringify({ tool, args }),
      timeoutMs,
    });
  } catch {
    throw new AgentGatewayError(`gateway ${tool}: connection failed or timed out`);
  }
  const body = await readAgentAnswer(response.body, response.headers.get('content-length'), limitBytes);
  if (!response.ok) throw new AgentGatewayError(`gateway ${tool} answered ${response.status}`, response.status);
  let parsed: Record<string, unknown>;
  try {
    parsed = record(JSON.parse(body));
  } catch {
    throw new AgentGatewayError(`gateway ${tool} answered something other than JSON`, response.status);
  }
  if (parsed.ok !== true) throw new AgentGatewayError(`gateway ${tool} did not succeed`, response.status);
  return record(record(parsed.result).details);
}

/** Text blocks of a message's content (a string, or `[{type:'text', text}]`). */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((block) =>
      record(block).type === 'text' && typeof record(block).text === 'string' ? (record(block).text as string) : '',
    )
    .filter(Boolean)
    .join('\n');
}

/** The gateway stores a requested session key under its agent's namespace (`agent:<id>:<key>`), or as given. */
const isSession = (key: unknown, sessionKey: string) =>
  typeof key === 'string' && (key === sessionKey || key.endsWith(`:${sessionKey}`));

/**
 * The outcome of the turn started at `startedAt` in `sessionKey`: unfinished until the session's
 * last message is the agent's, after a prompt that came at or after `startedAt` (less `skewMs`,
 * for the agent's clock); the agent's last words are its reply, an error or abort its failure.
 */
export async function readTurnOutcome(
  target: GatewayToolTarget,
  sessionKey: string,
  startedAt: Date,
  options: { timeoutMs: number; skewMs?: number },
): Promise<TurnOutcome> {
  const listed = await invokeGatewayTool(target, 'sessions_list', { limit: 200 }, options.timeoutMs);
  const session = (Array.isArray(listed.sessions) ? listed.sessions : [])
    .map(record)
    .find((s) => isSession(s.key, sessionKey));
  if (!session) return { finished: false };
  const history = await invokeGatewayTool(
    target,
    'sessions_history',
    { sessionKey: session.key, limit: 20, includeTools: false },
    options.timeoutMs,
  );
  const messages = (Array.isArray(history.messages) ? history.messages : []).map(record);
  const since = startedAt.getTime() - (options.skewMs ?? 5000);
  const prompt = messages.findLastIndex((m) => m.role === 'user' && (dateOf(m.timestamp)?.getTime() ?? 0) >= since);
  if (prompt < 0) return { finished: false };
  const last = messages.at(-1)!;
  if (last === messages[prompt] || last.role !== 'assistant' || last.stopReason === 'toolUse')
    return { finished: false };
  const endedAt = dateOf(last.timestamp);
  if (last.stopReason === 'error' || last.stopReason === 'aborted' || typeof last.errorMessage === 'string') {
    return {
      finished: true,
      ok: false,
      error: String(last.errorMessage ?? `the agent's turn ended with ${String(last.stopReason)}`).slice(0, 500),
      endedAt,
    };
  }
  const reply = messages
    .slice(prompt + 1)
    .filter((m) => m.role === 'assistant')
    .map((m) => textOf(m.content))
    .filter(Boolean)
    .join('\n');
  return { finished: true, ok: true, reply, endedAt };
}
