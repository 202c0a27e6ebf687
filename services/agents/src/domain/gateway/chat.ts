import { readAgentAnswer } from '@agentyard/agent-gateway';
import { fetchWithTimeout } from '@agentyard/http';
import { AgentWorkErrors } from '../../errors.ts';
import { type AgentGateway, gatewayFailure, onAgentControlPlane } from './agent-gateway-access.ts';

/**
 * A web chat turn is an agent turn on the agent's own gateway: its OpenAI-compatible
 * `POST /v1/chat/completions` (enabled in every agent's config), bearer = the agent's gateway token,
 * `x-openclaw-session-key` = the caller's session so turns continue. The model traffic it causes goes
 * through the platform's AI gateway, which records usage per agent.
 */

const RESERVED_SESSION_PREFIXES = ['subagent:', 'cron:', 'acp:'];

/** The caller's session on this agent: theirs by default, or the key they name (not one of OpenClaw's reserved namespaces). */
export function chatSessionKey(userId: string, sessionKey: string | undefined): string {
  if (sessionKey === undefined) return `agentyard:web:${userId}`;
  if (RESERVED_SESSION_PREFIXES.some((prefix) => sessionKey.toLowerCase().startsWith(prefix)))
    throw AgentWorkErrors.reservedSessionKey();
  return sessionKey;
}

export interface ChatTurn {
  sessionKey: string;
  message: string;
}
export interface ChatUsage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
}
export interface ChatAnswer {
  id: string;
  content: string;
  usage?: ChatUsage;
}

const record = (v: unknown): Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
const usageOf = (raw: unknown): ChatUsage | undefined => {
  const u = record(raw);
  return typeof u.prompt_tokens === 'number' && typeof u.completion_tokens === 'number'
    ? {
        promptTokens: u.prompt_tokens,
        completionTokens: u.completion_tokens,
        totalTokens: typeof u.total_tokens === 'number' ? u.total_tokens : u.prompt_tokens + u.completion_tokens,
      }
    : undefined;
};

async function postTurn(
  gateway: AgentGateway,
  turn: ChatTurn,
  stream: boolean,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<Response> {
  let response: Response;
  try {
    response = await fetchWithTimeout(new URL('/v1/chat/completions', gateway.baseUrl), {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${gateway.gatewayToken}`,
        'x-openclaw-session-key': turn.sessionKey,
      },
      body: JSON.stringify({ model: 'openclaw/default', stream, messages: [{ role: 'user', content: turn.message }] }),
      timeoutMs,
      signal,
    });
  } catch (error) {
    throw gatewayFailure(error);
  }
  if (response.status === 504 || response.status === 408) throw AgentWorkErrors.gatewayTimeout();
  if (!response.ok) {
    await response.body?.cancel().catch(() => {});
    throw AgentWorkErrors.gatewayUnavailable();
  }
  return response;
}

/** One turn, answered whole. Aborting `signal` closes the gateway request, which cancels the agent's run. */
export async function runChatTurn(
  gateway: AgentGateway,
  turn: ChatTurn,
  timeoutMs: number,
  maxAnswerBytes: number,
  signal?: AbortSignal,
): Promise<ChatAnswer> {
  const response = await postTurn(gateway, turn, false, timeoutMs, signal);
  let body: Record<string, unknown>;
  try {
    body = record(
      JSON.parse(await readAgentAnswer(response.body, response.headers.get('content-length'), maxAnswerBytes)),
    );
  } catch (error) {
    throw gatewayFailure(error);
  }
  const choice = record((Array.isArray(body.choices) ? body.choices : [])[0]);
  const content = record(choice.message).content;
  if (typeof content !== 'string') throw AgentWorkErrors.gatewayUnavailable();
  return { id: String(body.id ?? ''), content, usage: usageOf(body.usage) };
}

export type ChatStreamEvent =
  | { type: 'delta'; content: string }
  | { type: 'done'; id: string; content: string; usage?: ChatUsage };

/** Room for one SSE event's envelope (id, usage, JSON) around a delta: an event may be this much larger than the answer cap. */
const EVENT_ENVELOPE_BYTES = 16 * 1024;

/**
 * The turn's events from the gateway's SSE body: each content delta, then `done` with the whole
 * answer. A tenant's gateway sends what it likes, so the read stops (AgentWorkErrors.answerTooLarge)
 * once one event, or the answer put together, passes `maxAnswerBytes`: at most that plus one chunk is held.
 */
export async function* chatStreamEvents(
  body: AsyncIterable<Uint8Array>,
  maxAnswerBytes: number,
): AsyncGenerator<ChatStreamEvent> {
  const maxEventChars = maxAnswerBytes + EVENT_ENVELOPE_BYTES;
  const decoder = new TextDecoder();
  let buffer = '';
  let id = '';
  let content = '';
  let contentBytes = 0;
  let usage: ChatUsage | undefined;
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true });
    let end = buffer.indexOf('\n\n');
    while (end !== -1) {
      const event = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      end = buffer.indexOf('\n\n');
      if (event.length > maxEventChars) throw AgentWorkErrors.answerTooLarge(maxAnswerBytes);
      const data = event
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).trim())
        .join('\n');
      if (!data || data === '[DONE]') continue;
      let parsed: Record<string, unknown>;
      try {
        parsed = record(JSON.parse(data));
      } catch {
        continue;
      }
      id ||= String(parsed.id ?? '').slice(0, 256);
      usage = usageOf(parsed.usage) ?? usage;
      const delta = record(record((Array.isArray(parsed.choices) ? parsed.choices : [])[0]).delta).content;
      if (typeof delta === 'string' && delta) {
        contentBytes += Buffer.byteLength(delta);
        if (contentBytes > maxAnswerBytes) throw AgentWorkErrors.answerTooLarge(maxAnswerBytes);
        content += delta;
        yield { type: 'delta', content: delta };
      }
    }
    // An event still open past the cap is never read to its end.
    if (buffer.length > maxEventChars) throw AgentWorkErrors.answerTooLarge(maxAnswerBytes);
  }
  yield { type: 'done', id, content, usage };
}

/**
 * One turn as it is written, read within `maxAnswerBytes` (chatStreamEvents). Aborting `signal`
 * (the caller left) closes the gateway request, which cancels the agent's run.
 */
export async function* streamChatTurn(
  gateway: AgentGateway,
  turn: ChatTurn,
  timeoutMs: number,
  maxAnswerBytes: number,
  signal: AbortSignal,
): AsyncGenerator<ChatStreamEvent> {
  const response = await postTurn(gateway, turn, true, timeoutMs, signal);
  if (!response.body) throw AgentWorkErrors.gatewayUnavailable();
  try {
    // Leaving this loop early (a cap, the caller gone) cancels the response body: nothing more is read.
    yield* chatStreamEvents(response.body, maxAnswerBytes);
  } catch (error) {
    throw gatewayFailure(error);
  }
}

export interface ChatHistoryPage {
  messages: { role: string; content: string; createdAt: string | null }[];
  nextCursor: string | null;
}

/** Text of a transcript message's content (a string or text blocks); tool calls and images are left out. */
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
const isoOf = (v: unknown): string | null => {
  if (typeof v !== 'number' && typeof v !== 'string') return null;
  const date = new Date(v);
  return Number.isNaN(date.getTime()) ? null : date.toISOString();
};

// The cursor is how many of the newest messages earlier pages held (the gateway's `offset`), encoded.
const encodeCursor = (offset: number) => Buffer.from(`o${offset}`).toString('base64url');
function decodeCursor(cursor: string): number {
  const match = /^o(\d{1,9})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!match) throw AgentWorkErrors.badCursor();
  return Number(match[1]);
}

/** A page of the session's user and assistant messages from the gateway (`chat.history`), newest last. */
export async function readChatHistory(
  gateway: AgentGateway,
  sessionKey: string,
  options: { limit: number; cursor?: string; timeoutMs: number },
): Promise<ChatHistoryPage> {
  const offset = options.cursor ? decodeCursor(options.cursor) : 0;
  const page = await onAgentControlPlane(gateway, options.timeoutMs, (client) =>
    client.call('chat.history', { sessionKey, limit: options.limit, offset }, options.timeoutMs),
  );
  const raw = Array.isArray(page.messages) ? page.messages : [];
  const messages = raw
    .map(record)
    .filter((m) => m.role === 'user' || m.role === 'assistant')
    .map((m) => ({ role: String(m.role), content: textOf(m.content), createdAt: isoOf(m.timestamp) }));
  return { messages, nextCursor: page.hasMore === true ? encodeCursor(offset + raw.length) : null };
}
