import type { FastifyReply, FastifyRequest } from 'fastify';
import { getGlobalDispatcher, type Dispatcher } from 'undici';
import { IDENTITY_HEADER, UPGRADE_CHECK_HEADER } from '@agentyard/identity';
import { BACKEND_UNAVAILABLE, originForm } from './forward.ts';

/** A WebSocket upgrade request (a GET that would open a two-way channel). */
export const isWebSocketUpgrade = (request: FastifyRequest) =>
  String(request.headers.upgrade ?? '').toLowerCase() === 'websocket';

/**
 * Asks the service whether a web WebSocket upgrade may go on, before the edge accepts it: the
 * edge's proxy completes the client's handshake before it opens the service's, so the service's
 * refusal (401 without a session, 404 for someone else's agent, 409 not running) would otherwise
 * reach the client as a socket that opens and closes. The check is a plain GET of the same url
 * carrying the caller's identity and UPGRADE_CHECK_HEADER; a 2xx lets the upgrade through, any
 * other answer is the client's answer, as the service gave it. The target is the service's origin
 * and the request's path as sent (never a URL resolved against the origin, nor dot segments
 * resolved away), so the service checks exactly the path the edge matched.
 */
export async function checkUpgrade(
  request: FastifyRequest,
  reply: FastifyReply,
  serviceOrigin: string,
  timeoutMs: number,
): Promise<boolean> {
  let answer: Dispatcher.ResponseData;
  try {
    answer = await getGlobalDispatcher().request({
      origin: new URL(serviceOrigin).origin,
      path: originForm(request.url),
      method: 'GET',
      signal: AbortSignal.timeout(timeoutMs),
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      headers: {
        [IDENTITY_HEADER]: request.identityHeader,
        [UPGRADE_CHECK_HEADER]: '1',
        'x-request-id': request.id,
        'x-forwarded-for': request.ip,
      },
    });
  } catch {
    await reply.code(502).send(BACKEND_UNAVAILABLE);
    return false;
  }
  if (answer.statusCode >= 200 && answer.statusCode < 300) {
    answer.body.resume();
    return true;
  }
  const type = answer.headers['content-type'];
  let body: string;
  try {
    body = await answer.body.text();
  } catch {
    await reply.code(502).send(BACKEND_UNAVAILABLE);
    return false;
  }
  await reply
    .code(answer.statusCode)
    .type(typeof type === 'string' ? type : 'application/json')
    .send(body);
  return false;
}
