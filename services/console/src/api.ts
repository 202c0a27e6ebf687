/**
 * The console's one way to the API: same-origin fetches with the session cookie. Writes carry a JSON
 * body; the browser adds `Origin` and `Sec-Fetch-Site: same-origin` itself, which is what the edge's
 * CSRF check (services/edge/src/plugins/csrf.ts) lets through for cookie-authenticated writes.
 */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string | undefined;
  constructor(status: number, message: string, code?: string) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
  }
}

/** The API's own message from an error answer (`{error, code?}`), else the status in words. */
export function errorFrom(status: number, body: unknown): ApiError {
  const record = body && typeof body === 'object' ? (body as Record<string, unknown>) : {};
  const message =
    typeof record.error === 'string' && record.error
      ? record.error
      : `The server answered ${status}${status >= 500 ? ': try again in a moment' : ''}`;
  return new ApiError(status, message, typeof record.code === 'string' ? record.code : undefined);
}

export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      credentials: 'same-origin',
      headers:
        body === undefined
          ? { accept: 'application/json' }
          : { accept: 'application/json', 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(60_000),
    });
  } catch (error) {
    throw new ApiError(
      0,
      (error as Error).name === 'TimeoutError' ? 'The server did not answer in time' : 'The server cannot be reached',
    );
  }
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  if (!response.ok) throw errorFrom(response.status, parsed);
  return parsed as T;
}

export const get = <T>(path: string) => api<T>('GET', path);
export const post = <T>(path: string, body?: unknown) => api<T>('POST', path, body ?? {});
export const put = <T>(path: string, body: unknown) => api<T>('PUT', path, body);
export const patch = <T>(path: string, body: unknown) => api<T>('PATCH', path, body);
export const del = <T>(path: string, body?: unknown) => api<T>('DELETE', path, body);

/** A query string from the defined values only. */
export function query(values: Record<string, string | number | undefined>): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(values))
    if (value !== undefined && value !== '') params.set(key, String(value));
  const text = params.toString();
  return text ? `?${text}` : '';
}
