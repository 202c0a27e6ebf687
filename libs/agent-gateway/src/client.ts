import { fetchWithTimeout } from '@agentyard/http';
import { Agent, request } from 'undici';

/** The port the OpenClaw gateway listens on inside every agent (spec §8). */
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
  constructor(message: string, status?: number) {
    super(message);
    this.status = status;
  }
}

// Hooks calls keep their connections alive: a scheduled firing sends thousands of them to the same
// gateways. undici's request() costs the sender a fraction of fetch()'s CPU (no WHATWG streams);
// like fetchWithTimeout it follows no redirect, and its deadline covers the whole answer.
const hooksDispatcher = new Agent({ keepAliveTimeout: 10_000 });

async function postHook(target: HooksTarget, hook: 'agent' | 'wake', body: object, timeoutMs: number): Promise<Record<string, unknown>> {
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
    text = await response.body.text();
  } catch {
    throw new AgentGatewayError(`hook ${hook}: ${signal.aborted ? `timed out after ${timeoutMs} ms` : 'connection failed'}`);
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

/** Runs one agent turn with `message` (OpenClaw `POST /hooks/agent`); resolves with the run id. */
export async function runAgentTurn(
  target: HooksTarget,
  turn: { message: string; name?: string; sessionKey?: string; timeoutSeconds?: number },
  timeoutMs = 30_000,
): Promise<{ runId: string }> {
  const answer = await postHook(target, 'agent', turn, timeoutMs);
  return { runId: String(answer.runId ?? '') };
}

/** Queues a system event for the agent now (OpenClaw `POST /hooks/wake`): how heartbeats arrive. */
export async function wakeAgent(target: HooksTarget, text: string, timeoutMs = 30_000): Promise<void> {
  await postHook(target, 'wake', { text, mode: 'now' }, timeoutMs);
}

export interface AgentProbe {
  live: boolean;
  ready: boolean | null;
}

/** `/healthz` then, when live, `/readyz`; each within `timeoutMs` (spec: 5 s). */
export async function probeAgent(baseUrl: string, timeoutMs = 5000): Promise<AgentProbe> {
  const get = async (path: string) => {
    try {
      const response = await fetchWithTimeout(new URL(path, baseUrl), { timeoutMs });
      return { status: response.status, body: (await response.json().catch(() => null)) as Record<string, unknown> | null };
    } catch {
      return null;
    }
  };
  const health = await get('/healthz');
  if (health?.status !== 200) return { live: false, ready: null };
  const ready = await get('/readyz');
  return { live: true, ready: ready ? ready.body?.ready === true : null };
}
