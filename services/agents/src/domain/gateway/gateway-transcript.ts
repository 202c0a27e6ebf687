import { setTimeout } from 'node:timers/promises';
import { readAgentAnswer } from '@agentyard/agent-gateway';
import { fetchWithTimeout, UpstreamError } from '@agentyard/http';
import { AgentErrors } from '../../errors.ts';

/**
 * An agent's conversation as its OpenClaw gateway keeps it: `POST /tools/invoke` with the agent's
 * gateway token runs the `sessions_list` and `sessions_history` tools (both in the `messaging` and
 * `coding` profiles), which answer `{ok, result: {details}}` with a bounded, redacted transcript.
 */
export interface TranscriptMessage {
  id: string | null;
  role: string;
  text: string;
  timestamp: string | null;
  model: string | null;
}

export interface TranscriptSession {
  key: string;
  kind: string | null;
  updatedAt: string | null;
}

export interface Transcript {
  sessionKey: string | null;
  sessions: TranscriptSession[];
  messages: TranscriptMessage[];
}

interface GatewayTarget {
  baseUrl: string;
  gatewayToken: string;
  timeoutMs: number;
  /** The largest answer read; a larger one fails the read. */
  maxAnswerBytes: number;
}

const record = (v: unknown): Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
const text = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const isoOf = (v: unknown): string | null => {
  if (typeof v !== 'number' && typeof v !== 'string') return null;
  const date = new Date(v);
  return Number.isNaN(date.getTime()) ? null : date.toISOString();
};

/**
 * One tool call. A gateway briefly without its context answers 503 ("retry shortly": under load,
 * right after a turn); these reads change nothing, so they are asked again within their deadline.
 */
async function invokeTool(
  target: GatewayTarget,
  tool: string,
  args: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const deadline = Date.now() + target.timeoutMs;
  let response: Response;
  for (let waitMs = 100; ; waitMs = Math.min(waitMs * 2, 2000)) {
    response = await fetchWithTimeout(new URL('/tools/invoke', target.baseUrl), {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${target.gatewayToken}` },
      body: JSON.stringify({ tool, args }),
      timeoutMs: Math.max(1, deadline - Date.now()),
    });
    if (response.status !== 503 || Date.now() + waitMs >= deadline) break;
    await response.body?.cancel();
    await setTimeout(waitMs);
  }
  const body = await readAgentAnswer(response.body, response.headers.get('content-length'), target.maxAnswerBytes);
  if (!response.ok) throw new UpstreamError(`gateway ${tool} answered ${response.status}`, response.status);
  let parsed: Record<string, unknown>;
  try {
    parsed = record(JSON.parse(body));
  } catch {
    throw new UpstreamError(`gateway ${tool} answered something other than JSON`, response.status);
  }
  if (parsed.ok !== true) throw new UpstreamError(`gateway ${tool} did not succeed`, response.status);
  return record(record(parsed.result).details);
}

/** Text blocks of a message's content (a string, or `[{type:'text', text}]`); tool calls and images are left out. */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((block) => (record(block).type === 'text' ? (text(record(block).text) ?? '') : ''))
    .filter(Boolean)
    .join('\n');
}

function messageOf(raw: unknown): TranscriptMessage | null {
  const m = record(raw);
  const role = text(m.role);
  if (!role) return null;
  return {
    id: text(record(m.__openclaw).id),
    role,
    text: textOf(m.content),
    timestamp: isoOf(m.timestamp),
    model: text(m.model),
  };
}

function sessionOf(raw: unknown): TranscriptSession | null {
  const s = record(raw);
  const key = text(s.key);
  return key ? { key, kind: text(s.kind), updatedAt: isoOf(s.updatedAt) } : null;
}

/**
 * The agent's sessions, most recently active first, and the newest `limit` messages of
 * `sessionKey` (or of the most recently active session when none is named).
 */
export async function readAgentTranscript(
  target: GatewayTarget,
  options: { sessionKey?: string; limit: number },
): Promise<Transcript> {
  const listed = await invokeTool(target, 'sessions_list', { limit: 100 });
  const sessions = (Array.isArray(listed.sessions) ? listed.sessions : [])
    .map(sessionOf)
    .filter((s): s is TranscriptSession => s !== null)
    .sort((a, b) => (b.updatedAt ?? '').localeCompare(a.updatedAt ?? ''));
  // `main` is the gateway's own alias of the agent's main session.
  if (options.sessionKey && options.sessionKey !== 'main' && !sessions.some((s) => s.key === options.sessionKey))
    throw AgentErrors.sessionNotFound();
  const sessionKey = options.sessionKey ?? sessions[0]?.key ?? null;
  if (!sessionKey) return { sessionKey: null, sessions, messages: [] };
  const history = await invokeTool(target, 'sessions_history', {
    sessionKey,
    limit: options.limit,
    includeTools: false,
  });
  const messages = (Array.isArray(history.messages) ? history.messages : [])
    .map(messageOf)
    .filter((m): m is TranscriptMessage => m !== null);
  return { sessionKey, sessions, messages: messages.slice(-options.limit) };
}
