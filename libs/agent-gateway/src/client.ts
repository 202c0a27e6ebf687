import { fetchWithTimeout } from '@agentyard/http';
import { Agent, request } from 'undici';

/** The port the OpenClaw gateway listens on inside every agent. */
export const AGENT_GATEWAY_PORT = 18789;
/** Where the platform configures the gateway's HTTP hooks. */
export const HOOKS_PATH = '/hooks';

export interface HooksTarget {
  /** The agent gateway's base URL as the platform reaches it, e.g. http://127.0.0.1:41234 */
  baseUrl: string;
  hooksToken: string;
}

export class AgentGatewayError extends Error {
  override name = 'AgentGatewayError';
  readonly status: number | undefined;
  /** Set when the gateway sent more than the platform reads: the cap, in bytes. */
  readonly tooLarge: number | undefined;
  constructor(message: string, status?: number, tooLarge?: number) {
    super(message);
    this.status = status;
    this.tooLarge = tooLarge;
  }
}

/** Default cap on an agent gateway's answer (1 MB): a larger one is a gateway error, never buffered whole. */
export const AGENT_ANSWER_LIMIT_BYTES = 1024 * 1024;

/**
 * An agent's answer body as text, read up to `limitBytes`: a tenant's container decides what it
 * sends, so a larger answer (by its Content-Length, or as it streams) stops the read and throws.
 */
export async function readAgentAnswer(
  body: AsyncIterable<Uint8Array> | null | undefined,
  contentLength: string | number | null | undefined,
  limitBytes = AGENT_ANSWER_LIMIT_BYTES,
): Promise<string> {
  const tooLarge = () => new AgentGatewayError(`answer larger than ${limitBytes} bytes`, undefined, limitBytes);
  if (contentLength !== null && contentLength !== undefined && Number(contentLength) > limitBytes) {
    await (body as { cancel?: () => Promise<void>; destroy?: () => void } | null)?.cancel?.().catch(() => {});
    (body as { destroy?: () => void } | null)?.destroy?.();
    throw tooLarge();
  }
  if (!body) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.byteLength;
    if (size > limitBytes) throw tooLarge(); // leaving the loop cancels the rest of the stream
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

// Hooks calls keep their connections alive: a scheduled firing sends thousands of them to the same
// gateways. undici's request() costs the sender a fraction of fetch()'s CPU (no WHATWG streams);
// like fetchWithTimeout it follows no redirect, and its deadline covers the whole answer.
const hooksDispatcher = new Agent({ keepAliveTimeout: 10_000 });

async function postHook(
  target: HooksTarget,
  hook: 'agent' | 'wake',
  body: object,
  timeoutMs: number,
  limitBytes: number,
): Promise<Record<string, unknown>> {
  const signal = AbortSignal.timeout(timeoutMs);
  let status: number;
  let text: string;
  try {
    const response = await request(new URL(`${HOOKS_PATH}/${hook}`, target.baseUrl), {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${target.hooksToken}` },
      body: JSON.stringify(body),
      signal,
      dispatcher: hooksDispatcher,
    });
    status = response.statusCode;
    text = await readAgentAnswer(response.body, response.headers['content-length'] as string | undefined, limitBytes);
  } catch (error) {
    if (error instanceof AgentGatewayError) throw new AgentGatewayError(`hook ${hook}: ${error.message}`);
    throw new AgentGatewayError(
      `hook ${hook}: ${signal.aborted ? `timed out after ${timeoutMs} ms` : 'connection failed'}`,
    );
  }
  if (status < 200 || status > 299) throw new AgentGatewayError(`hook ${hook} answered ${status}`, status);
  try {
    const parsed = JSON.parse(text) as Record<string, unknown>;
    if (parsed.ok !== true) throw new Error('not ok');
    return parsed;
  } catch {
    throw new AgentGatewayError(`hook ${hook} answered an unexpected body`, status);
  }
}

/**
 * Runs one agent turn with `message` (OpenClaw `POST /hooks/agent`); resolves with the run id. By
 * default the gateway runs it in a session of its own (`cron:<job id>`); `sessionMode: 'persistent'`
 * runs it in `sessionKey`, so the turns of one caller thread there and can be read back from it.
 */
export async function runAgentTurn(
  target: HooksTarget,
  turn: { message: string; name?: string; sessionKey?: string; sessionMode?: 'persistent'; timeoutSeconds?: number },
  timeoutMs = 30_000,
  limitBytes = AGENT_ANSWER_LIMIT_BYTES,
): Promise<{ runId: string }> {
  const answer = await postHook(target, 'agent', turn, timeoutMs, limitBytes);
  return { runId: String(answer.runId ?? '') };
}

/** Queues a system event for the agent now (OpenClaw `POST /hooks/wake`): how heartbeats arrive. */
export async function wakeAgent(
  target: HooksTarget,
  text: string,
  timeoutMs = 30_000,
  limitBytes = AGENT_ANSWER_LIMIT_BYTES,
): Promise<void> {
  await postHook(target, 'wake', { text, mode: 'now' }, timeoutMs, limitBytes);
}

export interface AgentProbe {
  live: boolean;
  ready: boolean | null;
}

/** `/healthz` then, when live, `/readyz`; each within `timeoutMs` (spec: 5 s). An answer over `limitBytes` counts as none. */
export async function probeAgent(
  baseUrl: string,
  timeoutMs = 5000,
  limitBytes = AGENT_ANSWER_LIMIT_BYTES,
): Promise<AgentProbe> {
  const get = async (path: string) => {
    try {
      const response = await fetchWithTimeout(new URL(path, baseUrl), { timeoutMs });
      const text = await readAgentAnswer(response.body, response.headers.get('content-length'), limitBytes);
      let body: Record<string, unknown> | null = null;
      try {
        body = JSON.parse(text) as Record<string, unknown>;
      } catch {
        /* a probe's body is optional: its status speaks */
      }
      return { status: response.status, body };
    } catch {
      return null;
    }
  };
  const health = await get('/healthz');
  if (health?.status !== 200) return { live: false, ready: null };
  const ready = await get('/readyz');
  return { live: true, ready: ready ? ready.body?.ready === true : null };
}
