import { StringDecoder } from 'node:string_decoder';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { Agent, request } from 'undici';
import { UpstreamError } from '@agentyard/http';
import type { ChatTurn } from './types.ts';

// Provider calls go through undici's request() on keep-alive connections rather than fetch, and their
// answers are read from undici's own body: the same HTTP without the WHATWG Request, Response,
// Headers and web-stream objects, which were most of the ai service's allocation per chat.
const providers = new Agent({ keepAliveTimeout: 30_000, keepAliveMaxTimeout: 120_000, connectTimeout: 10_000 });

type Answer = Awaited<ReturnType<typeof request>>;

/**
 * POSTs JSON to a provider; resolves with a 2xx answer whose body is still to be read, within
 * `timeoutMs` from start to end (body included); a non-2xx answer is an UpstreamError naming only
 * the status. `settled` must be called once the body has been read or abandoned.
 */
async function post(url: string, headers: Record<string, string>, body: unknown, timeoutMs: number) {
  const deadline = new AbortController();
  const timer = setTimeout(
    () => deadline.abort(new DOMException(`timed out after ${timeoutMs} ms`, 'TimeoutError')),
    timeoutMs,
  );
  const settled = () => clearTimeout(timer);
  const timedOut = () => deadline.signal.aborted;
  let answer: Answer;
  try {
    answer = await request(url, {
      method: 'POST',
      dispatcher: providers,
      signal: deadline.signal,
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
  } catch (error) {
    settled();
    throw new UpstreamError(timedOut() ? `timed out after ${timeoutMs} ms` : 'connection failed', undefined, {
      cause: error,
    });
  }
  const { statusCode } = answer;
  if (statusCode < 200 || statusCode > 299) {
    const said =
      statusCode < 500
        ? await answer.body.text().then(providerMessageOf, () => undefined)
        : await answer.body.dump().then(
            () => undefined,
            () => undefined,
          );
    settled();
    throw new ProviderRefusal(statusCode, said, retryAfterMsOf(answer.headers));
  }
  return { answer, settled, timedOut };
}

/**
 * A provider's non-2xx answer: its status, and for a 4xx what it said (`error.message`, the shape
 * OpenAI, Anthropic and Gemini share), told to a caller whose own key it refused, never logged.
 */
export class ProviderRefusal extends UpstreamError {
  readonly providerMessage: string | undefined;
  /** How long the provider asked to be left alone before the same call (its Retry-After); undefined when it did not say. */
  readonly retryAfterMs: number | undefined;
  constructor(status: number, providerMessage: string | undefined, retryAfterMs?: number) {
    super(`provider answered ${status}`, status);
    this.providerMessage = providerMessage;
    this.retryAfterMs = retryAfterMs;
  }
}

/**
 * The wait a provider's answer asks for: `retry-after-ms` (OpenAI's), else `retry-after` in seconds
 * or as an HTTP date (RFC 9110); undefined when it says nothing readable.
 */
export function retryAfterMsOf(
  headers: Record<string, string | string[] | undefined>,
  now = Date.now(),
): number | undefined {
  const one = (name: string) => {
    const value = headers[name];
    return (Array.isArray(value) ? value[0] : value)?.trim();
  };
  const ms = one('retry-after-ms');
  if (ms && /^\d+(\.\d+)?$/.test(ms)) return Math.ceil(Number(ms));
  const after = one('retry-after');
  if (!after) return undefined;
  if (/^\d+$/.test(after)) return Number(after) * 1000;
  // An HTTP date starts with its day's name (all three forms RFC 9110 reads).
  const at = /^[A-Za-z]{3}/.test(after) ? Date.parse(after) : Number.NaN;
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

const PROVIDER_MESSAGE_MAX = 300;

function providerMessageOf(text: string): string | undefined {
  try {
    const error = (JSON.parse(text) as { error?: { message?: unknown } | string }).error;
    const message = typeof error === 'string' ? error : error?.message;
    return typeof message === 'string' && message.trim() ? message.trim().slice(0, PROVIDER_MESSAGE_MAX) : undefined;
  } catch {
    return undefined;
  }
}

/** POSTs JSON to a provider and reads its answer whole: a JSON object, else an UpstreamError. */
export async function postForJson(
  url: string,
  headers: Record<string, string>,
  body: unknown,
  timeoutMs: number,
): Promise<Record<string, unknown>> {
  const { answer, settled, timedOut } = await post(url, headers, body, timeoutMs);
  let text: string;
  try {
    text = await answer.body.text();
  } catch (error) {
    throw new UpstreamError(timedOut() ? 'timed out reading the answer' : 'the answer was cut off', undefined, {
      cause: error,
    });
  } finally {
    settled();
  }
  try {
    const value = JSON.parse(text);
    if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    /* falls through */
  }
  throw new UpstreamError('provider sent a malformed body');
}

/**
 * POSTs JSON to a provider that answers with Server-Sent Events: resolves once it has answered 2xx
 * (so a caller can still fall back), then yields the events as they arrive, the deadline still
 * running; a dropped connection or a timeout mid-way surfaces as an UpstreamError.
 */
export async function postForEvents(
  url: string,
  headers: Record<string, string>,
  body: unknown,
  timeoutMs: number,
): Promise<AsyncGenerator<EventSourceMessage>> {
  const { answer, settled } = await post(url, headers, body, timeoutMs);
  return (async function* events() {
    const parsed: EventSourceMessage[] = [];
    let overflow = false;
    const parser = createParser({
      onEvent: (event) => parsed.push(event),
      onError: (error) => {
        if (error.type === 'max-buffer-size-exceeded') overflow = true;
      },
    });
    try {
      const text = new StringDecoder('utf8');
      for await (const chunk of answer.body as AsyncIterable<Buffer>) {
        parser.feed(text.write(chunk));
        if (overflow) throw new Error('event larger than the parser allows');
        yield* parsed.splice(0);
      }
    } catch (error) {
      throw new UpstreamError('stream interrupted', undefined, { cause: error });
    } finally {
      settled();
      answer.body.destroy();
    }
  })();
}

export function parseEvent(data: string): Record<string, unknown> {
  try {
    const value = JSON.parse(data);
    if (value && typeof value === 'object') return value as Record<string, unknown>;
  } catch {
    /* falls through */
  }
  throw new UpstreamError('provider sent a malformed stream event');
}

/** Text of an OpenAI message content: a string, or the text parts of an array. */
export function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content))
    return content
      .map((part) =>
        part && typeof part === 'object' && typeof (part as { text?: unknown }).text === 'string'
          ? (part as { text: string }).text
          : '',
      )
      .join('');
  return '';
}

/** Turns of an OpenAI-format message list as plain text (for providers with another format). */
export function turnsOf(messages: unknown): ChatTurn[] {
  if (!Array.isArray(messages)) return [];
  return messages.map((m) => ({
    role: String((m as { role?: unknown }).role ?? 'user'),
    content: textOf((m as { content?: unknown }).content),
  }));
}

export const num = (value: unknown): number =>
  typeof value === 'number' && Number.isFinite(value) && value >= 0 ? Math.round(value) : 0;
