import { fetchWithTimeout } from '@agentyard/http';
import type { agentHealth } from './health.ts';

/** How long a warm gateway may take to boot, and its first turn to run, before priming gives up. */
const PRIME_READY_MS = 600_000;
const PRIME_TURN_MS = 300_000;

/**
 * A booted warm gateway's first turn, run with its own throwaway token before any agent claims it.
 * OpenClaw loads its agent runner and lays out the workspace at its first turn (about 15 s on these
 * machines), so the agent that claims the gateway does not wait for that. The turn's model call is
 * refused (the AI gateway knows no throwaway key): nothing is spent. It leaves one session,
 * `warm-up`, in the state the agent inherits. A failed turn is ignored (an unprimed gateway still
 * serves); false when the gateway never became ready (it may have exited: OpenClaw gives up its boot
 * when its state lease times out on an overloaded host).
 */
export async function primeWarmGateway(
  readiness: Pick<ReturnType<typeof agentHealth>, 'waitUntilReady'>,
  gatewayUrl: string,
  gatewayToken: string,
): Promise<boolean> {
  if (!(await readiness.waitUntilReady(gatewayUrl, PRIME_READY_MS, gatewayToken))) return false;
  await fetchWithTimeout(new URL('/v1/chat/completions', gatewayUrl), {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: `Bearer ${gatewayToken}`,
      'x-openclaw-session-key': 'warm-up',
    },
    body: JSON.stringify({ model: 'openclaw/default', messages: [{ role: 'user', content: 'warm-up' }] }),
    timeoutMs: PRIME_TURN_MS,
  }).then(
    (response) => response.body?.cancel(),
    () => undefined,
  );
  return true;
}
