import { fetchWithTimeout } from '@agentyard/http';

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

async function postHook(target: HooksTarget, hook: 'agent' | 'wake', body: object, timeoutMs: number): Promise<Record<string, unknown>> {
  let response: Response;
  try {
    response = await fetchWithTimeout(new URL(`${HOOKS_PATH}/${hook}`, target.baseUrl), {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${target.hooksToken}` },
      body: JSON.stringify(body),
      timeoutMs,
    });
  } catch (error) {
    throw new AgentGatewayError(`hook ${hook}: ${(error as Error).message}`);
  }
  const text = await response.text();
  if (!response.ok) throw new AgentGatewayError(`hook ${hook} answered ${response.status}`, response.status);
  try {
    const parsed = JSON.parse(text) as Record<string, unknown>;
    if (parsed.ok !== true) throw new Error('not ok');
    return parsed;
  } catch {
    throw new AgentGatewayError(`hook ${hook} answered an unexpected body`, response.status);
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
