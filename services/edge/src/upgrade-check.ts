import type { FastifyReply, FastifyRequest } from 'fastify';
import { fetchWithTimeout } from '@agentyard/http';
import { IDENTITY_HEADER, UPGRADE_CHECK_HEADER } from '@agentyard/identity';
import { BACKEND_UNAVAILABLE } from './forward.ts';

/** A WebSocket upgrade request (a GET that would open a two-way channel). */
export const isWebSocketUpgrade = (request: FastifyRequest) => String(request.headers.upgrade ?? '').toLowerCase() === 'websocket';

/**
 * Asks the service whether a web WebSocket upgrade may go on, before the edge accepts it: the
 * edge's proxy completes the client's handshake before it opens the service's, so the service's
 * refusal (401 without a session, 404 for someone else's agent, 409 not running) would otherwise
 * reach the client as a socket that opens and closes. The check is a plain GET of the same url
 * carrying the caller's identity and UPGRADE_CHECK_HEADER; a 2xx lets the upgrade through, any
 * other answer is the client's answer, as the service gave it.
 */
export async function checkUpgrade(request: FastifyRequest, reply: FastifyReply, serviceOrigin: string, timeoutMs: number): Promise<boolean> {
  let answer: Response;
  try {
    answer = await fetchWithTimeout(new URL(request.url, serviceOrigin), {
      method: 'GET',
      timeoutMs,
      headers: { [IDENTITY_HEADER]: request.identityHeader, [UPGRADE_CHECK_HEADER]: '1', 'x-request-id': request.id, 'x-forwarded-for': request.ip },
    });
  } catch {
    await reply.code(502).send(BACKEND_UNAVAILABLE);
    return false;
  }
  if (answer.status >= 200 && answer.status < 300) {
    await answer.body?.cancel();
    return true;
  }
  await reply
    .code(answer.status)
    .type(answer.headers.get('content-type') ?? 'application/json')
    .send(await answer.text());
  return false;
}
