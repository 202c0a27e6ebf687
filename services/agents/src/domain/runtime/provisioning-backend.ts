import { AGENT_ANSWER_LIMIT_BYTES, AgentGatewayError, readAgentAnswer } from '@agentyard/agent-gateway';
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
 * One provisioning backend (`/api/provision`): the session's email and id go in headers,
 * never the body's; a reply that is not a JSON object with `success` and a `url` is a failure.
 */
export async function provisionThroughBackend(
  url: string,
  user: { id: string; email: string },
  request: Record<string, unknown>,
  timeoutMs: number,
): Promise<BackendProvision> {
  const response = await fetchWithTimeout(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-user-email': user.email, 'x-user-id': user.id },
    body: JSON.stringify(request),
    timeoutMs,
  });
  // Read to 1 MB at most: an answer larger than any real one is a failure, never buffered whole.
  const text = await readAgentAnswer(response.body, response.headers.get('content-length')).catch((error) => {
    if (!(error instanceof AgentGatewayError && error.tooLarge)) throw error;
    throw new UpstreamError(`backend answered more than ${AGENT_ANSWER_LIMIT_BYTES} bytes`, response.status);
  });
  if (!response.ok) throw new UpstreamError(`backend answered ${response.status}`, response.status);
  let reply: Record<string, unknown>;
  try {
    reply = JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw new UpstreamError('backend answered something other than JSON', response.status);
  }
  if (reply === null || typeof reply !== 'object' || reply.success === false || typeof reply.url !== 'string')
    throw new UpstreamError('backend answered without a runtime URL', response.status);
  return checkedReply(reply, response.status);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const isHttpUrl = (v: string) => {
  try {
    return v.length <= 2048 && ['http:', 'https:'].includes(new URL(v).protocol);
  } catch {
    return false;
  }
};

/**
 * What a backend answered, before any of it is stored or shown: the runtime URL an http(s) URL,
 * the instance id (stored on the user and later read as an agent id) a UUID, the other fields
 * short strings. Anything else fails this path like a non-JSON answer does.
 */
function checkedReply(reply: Record<string, unknown>, status: number): BackendProvision {
  const invalid = (field: string) => new UpstreamError(`backend answered an invalid ${field}`, status);
  const optionalText = (field: string): string | undefined => {
    const value = reply[field];
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'string' || value.length > 255 || value.includes('\u0000')) throw invalid(field);
    return value;
  };
  if (!isHttpUrl(reply.url as string)) throw invalid('url');
  const instanceId = optionalText('instanceId');
  if (instanceId !== undefined && !UUID.test(instanceId)) throw invalid('instanceId');
  return {
    url: reply.url as string,
    subdomain: optionalText('subdomain'),
    instanceId,
    streamKey: optionalText('streamKey'),
    liveStreamId: optionalText('liveStreamId'),
    container: reply.container,
  };
}
