import { EventSourceParserStream, type EventSourceMessage } from 'eventsource-parser/stream';
import { fetchWithTimeout, UpstreamError } from '@agentyard/http';
import type { ChatTurn } from './types.ts';

/** POSTs JSON to a provider; a non-2xx answer is an UpstreamError naming only the status. */
export async function postJson(url: string, headers: Record<string, string>, body: unknown, timeoutMs: number): Promise<Response> {
  const response = await fetchWithTimeout(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
    timeoutMs,
  });
  if (!response.ok) {
    await response.body?.cancel().catch(() => {});
    throw new UpstreamError(`provider answered ${response.status}`, response.status);
  }
  return response;
}

export async function readJson(response: Response): Promise<Record<string, unknown>> {
  try {
    const body = await response.json();
    if (body && typeof body === 'object' && !Array.isArray(body)) return body as Record<string, unknown>;
  } catch (error) {
    if ((error as Error).name === 'TimeoutError' || (error as Error).name === 'AbortError') throw new UpstreamError('timed out reading the answer', undefined, { cause: error });
  }
  throw new UpstreamError('provider sent a malformed body');
}

/** The Server-Sent Events of a response body; a dropped connection surfaces as an UpstreamError. */
export async function* serverSentEvents(response: Response): AsyncGenerator<EventSourceMessage> {
  if (!response.body) throw new UpstreamError('provider sent no stream');
  try {
    for await (const event of response.body.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream())) yield event;
  } catch (error) {
    throw new UpstreamError('stream interrupted', undefined, { cause: error });
  }
}

export function parseEvent(data: string): Record<string, unknown> {
  try {
    const value = JSON.parse(data);
    if (value && typeof value === 'object') return value as Record<string, unknown>;
  } catch { /* falls through */ }
  throw new UpstreamError('provider sent a malformed stream event');
}

/** Text of an OpenAI message content: a string, or the text parts of an array. */
export function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((part) => (part && typeof part === 'object' && typeof (part as { text?: unknown }).text === 'string' ? (part as { text: string }).text : '')).join('');
  return '';
}

/** Turns of an OpenAI-format message list as plain text (for providers with another format). */
export function turnsOf(messages: unknown): ChatTurn[] {
  if (!Array.isArray(messages)) return [];
  return messages.map((m) => ({ role: String((m as { role?: unknown }).role ?? 'user'), content: textOf((m as { content?: unknown }).content) }));
}

export const num = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) && value >= 0 ? Math.round(value) : 0);
