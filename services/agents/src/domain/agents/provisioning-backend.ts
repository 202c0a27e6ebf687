import { fetchWithTimeout, UpstreamError } from '@agentyard/http';

export interface BackendProvision {
  url: string;
  subdomain?: string;
  instanceId?: string;
  streamKey?: string;
  liveStreamId?: string;
  container?: unknown;
}

/**
 * One provisioning backend (spec §4.5 `/api/provision`): the session's email and id go in headers,
 * never the body's; a reply that is not a JSON object with `success` and a `url` is a failure.
 */
export async function provisionThroughBackend(url: string, user: { id: string; email: string }, request: Record<string, unknown>, timeoutMs: number): Promise<BackendProvision> {
  const response = await fetchWithTimeout(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-user-email': user.email, 'x-user-id': user.id },
    body: JSON.stringify(request),
    timeoutMs,
  });
  const text = await response.text();
  if (!response.ok) throw new UpstreamError(`backend answered ${response.status}`, response.status);
  let reply: Record<string, unknown>;
  try {
    reply = JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw new UpstreamError('backend answered something other than JSON', response.status);
  }
  if (reply === null || typeof reply !== 'object' || reply.success === false || typeof reply.url !== 'string') throw new UpstreamError('backend answered without a runtime URL', response.status);
  const text_ = (v: unknown) => (typeof v === 'string' ? v : undefined);
  return { url: reply.url, subdomain: text_(reply.subdomain), instanceId: text_(reply.instanceId) ?? text_(reply.subdomain), streamKey: text_(reply.streamKey), liveStreamId: text_(reply.liveStreamId), container: reply.container };
}
