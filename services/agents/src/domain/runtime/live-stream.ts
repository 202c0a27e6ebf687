import { AGENT_ANSWER_LIMIT_BYTES, AgentGatewayError, readAgentAnswer } from '@agentyard/agent-gateway';
import { fetchWithTimeout, UpstreamError } from '@agentyard/http';

export interface LiveStreamProvider {
  baseUrl: string;
  tokenId: string;
  tokenSecret: string;
  timeoutMs: number;
}

export interface LiveStream {
  liveStreamId: string;
  streamKey: string;
}

/** The provider when both halves of its access token are set; otherwise no live stream is made. */
export function liveStreamProvider(config: {
  LIVE_STREAM_API_URL: string;
  LIVE_STREAM_TOKEN_ID: string;
  LIVE_STREAM_TOKEN_SECRET?: string;
  LIVE_STREAM_TIMEOUT_MS: number;
}): LiveStreamProvider | null {
  if (!config.LIVE_STREAM_TOKEN_ID || !config.LIVE_STREAM_TOKEN_SECRET) return null;
  return {
    baseUrl: config.LIVE_STREAM_API_URL,
    tokenId: config.LIVE_STREAM_TOKEN_ID,
    tokenSecret: config.LIVE_STREAM_TOKEN_SECRET,
    timeoutMs: config.LIVE_STREAM_TIMEOUT_MS,
  };
}

/**
 * Creates a live stream with a Mux-style API: `POST /video/v1/live-streams` with HTTP Basic
 * `<token id>:<token secret>`, answered `{data: {id, stream_key}}`.
 */
export async function createLiveStream(provider: LiveStreamProvider): Promise<LiveStream> {
  const response = await fetchWithTimeout(new URL('/video/v1/live-streams', provider.baseUrl), {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: `Basic ${Buffer.from(`${provider.tokenId}:${provider.tokenSecret}`).toString('base64')}`,
    },
    body: JSON.stringify({ playback_policy: ['public'], new_asset_settings: { playback_policy: ['public'] } }),
    timeoutMs: provider.timeoutMs,
  });
  // Read to 1 MB at most: an answer larger than any real one is a failure, never buffered whole.
  const text = await readAgentAnswer(response.body, response.headers.get('content-length')).catch((error) => {
    if (!(error instanceof AgentGatewayError && error.tooLarge)) throw error;
    throw new UpstreamError(
      `live-stream provider answered more than ${AGENT_ANSWER_LIMIT_BYTES} bytes`,
      response.status,
    );
  });
  if (!response.ok) throw new UpstreamError(`live-stream provider answered ${response.status}`, response.status);
  let data: { id?: unknown; stream_key?: unknown } | undefined;
  try {
    data = (JSON.parse(text) as { data?: { id?: unknown; stream_key?: unknown } }).data;
  } catch {
    throw new UpstreamError('live-stream provider answered something other than JSON', response.status);
  }
  if (typeof data?.id !== 'string' || typeof data.stream_key !== 'string')
    throw new UpstreamError('live-stream provider answered without an id and stream key', response.status);
  return { liveStreamId: data.id, streamKey: data.stream_key };
}
