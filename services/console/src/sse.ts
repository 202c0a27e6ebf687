// Server-Sent Events read from a fetch answer, for the streams EventSource cannot open (a POST with a
// body: the chat turn). The parser is plain so it is tested without a browser.
import { ApiError, errorFrom } from './api.ts';

export interface StreamEvent {
  event: string;
  data: string;
}

/**
 * A parser of the event-stream format (WHATWG HTML §9.2.6): `push` takes text as it arrives, in
 * chunks cut anywhere, and calls `onEvent` for each complete event; comments (`: keep-alive`) are skipped.
 */
export function eventStreamParser(onEvent: (event: StreamEvent) => void) {
  let buffer = '';
  let event = '';
  let data: string[] = [];
  const line = (text: string) => {
    if (text === '') {
      if (data.length) onEvent({ event: event || 'message', data: data.join('\n') });
      event = '';
      data = [];
      return;
    }
    if (text.startsWith(':')) return;
    const colon = text.indexOf(':');
    const field = colon < 0 ? text : text.slice(0, colon);
    const value = colon < 0 ? '' : text.slice(colon + 1).replace(/^ /, '');
    if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
  };
  return {
    push(chunk: string) {
      buffer += chunk;
      // A lone \r at the end may be the first half of \r\n: it waits for the next chunk.
      const lines = buffer.split(/\r\n|\n|\r(?!$)/);
      buffer = lines.pop() ?? '';
      for (const text of lines) line(text);
    },
  };
}

/** The JSON of an event's data, or undefined when it is not JSON. */
export function eventData<T>(event: StreamEvent): T | undefined {
  try {
    return JSON.parse(event.data) as T;
  } catch {
    return undefined;
  }
}

/**
 * Reads an event-stream answer to its end, handing each event to `onEvent`. An error answer (the
 * API refuses before streaming: 409 AGENT_NOT_RUNNING, 429…) is thrown as the API's own message.
 */
export async function readEventStream(response: Response, onEvent: (event: StreamEvent) => void): Promise<void> {
  if (!response.ok) {
    const text = await response.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    throw errorFrom(response.status, body);
  }
  if (!response.body) throw new ApiError(response.status, 'The server sent no answer');
  const parser = eventStreamParser(onEvent);
  const decoder = new TextDecoder();
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    parser.push(decoder.decode(value, { stream: true }));
  }
  // An event cut off by the end of the stream is incomplete: the format drops it.
  parser.push(decoder.decode());
}
