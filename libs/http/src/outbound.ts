/** An outbound call that failed: a timeout, a refused connection or an answer we cannot use. */
export class UpstreamError extends Error {
  override name = 'UpstreamError';
  readonly status: number | undefined;
  constructor(message: string, status?: number, options?: { cause?: unknown }) {
    super(message, options);
    this.status = status;
  }
}

/**
 * fetch with a deadline (rule 7: every outbound call has a timeout). Redirects are not followed
 * unless asked, so a peer cannot bounce us to an address we did not choose.
 */
export async function fetchWithTimeout(
  url: string | URL,
  init: RequestInit & { timeoutMs: number },
): Promise<Response> {
  const { timeoutMs, ...rest } = init;
  const signal = rest.signal
    ? AbortSignal.any([rest.signal, AbortSignal.timeout(timeoutMs)])
    : AbortSignal.timeout(timeoutMs);
  try {
    return await fetch(url, { redirect: 'manual', ...rest, signal });
  } catch (error) {
    const timedOut = (error as Error).name === 'TimeoutError';
    throw new UpstreamError(timedOut ? `timed out after ${timeoutMs} ms` : 'connection failed', undefined, {
      cause: error,
    });
  }
}
