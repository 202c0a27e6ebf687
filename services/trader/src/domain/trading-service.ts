import { fetchWithTimeout } from '@agentyard/http';
import { TraderErrors } from '../errors.ts';

export interface TradingService {
  baseUrl: string;
  timeoutMs: number;
}

/** One call to the trading service with the caller's key; its JSON answer, or 502 (never the key, never a hang). */
export async function callTradingService(
  service: TradingService,
  apiKey: string,
  path: string,
  init: { method: 'GET' | 'POST'; body?: unknown } = { method: 'GET' },
): Promise<unknown> {
  let res: Response;
  try {
    res = await fetchWithTimeout(`${service.baseUrl.replace(/\/$/, '')}${path}`, {
      method: init.method,
      timeoutMs: service.timeoutMs,
      headers: {
        'x-api-key': apiKey,
        accept: 'application/json',
        ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      body: init.body !== undefined ? JSON.stringify(init.body) : undefined,
    });
  } catch (error) {
    throw TraderErrors.upstreamFailed((error as Error).message);
  }
  let body: unknown;
  try {
    body = JSON.parse(await res.text());
  } catch {
    throw TraderErrors.upstreamFailed(`answered ${res.status} without JSON`);
  }
  if (!res.ok) throw TraderErrors.upstreamFailed(`answered ${res.status}`);
  return body;
}
