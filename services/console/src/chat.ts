// One chat turn with an agent, streamed: POST /api/chat with `Accept: text/event-stream` answers
// `event: delta` {content} pieces, then `event: done` with the whole reply, or `event: error` {error}.
import { ApiError } from './api.ts';
import { eventData, readEventStream, type StreamEvent } from './sse.ts';
import type { ChatReply } from './types.ts';

/** What one event of a turn's stream does to the answer so far: more text, the finished reply, or the gateway's break-off. */
export type TurnStep =
  | { kind: 'text'; text: string }
  | { kind: 'done'; reply: ChatReply }
  | { kind: 'error'; message: string }
  | { kind: 'none' };

export function turnStep(event: StreamEvent): TurnStep {
  if (event.event === 'delta') {
    const data = eventData<{ content?: unknown }>(event);
    return typeof data?.content === 'string' ? { kind: 'text', text: data.content } : { kind: 'none' };
  }
  if (event.event === 'done') {
    const reply = eventData<ChatReply>(event);
    return typeof reply?.message?.content === 'string' ? { kind: 'done', reply } : { kind: 'none' };
  }
  if (event.event === 'error') {
    const data = eventData<{ error?: unknown }>(event);
    return { kind: 'error', message: typeof data?.error === 'string' ? data.error : 'The agent stopped answering' };
  }
  return { kind: 'none' };
}

/**
 * Sends `message` to the agent and calls `onText` with the answer so far as it arrives; resolves
 * with the finished reply. Throws the API's message when it refuses (409 AGENT_NOT_RUNNING…) or the
 * gateway breaks off; `signal` stops the turn (the platform then ends the agent's run).
 */
export async function streamTurn(
  agentId: string,
  message: string,
  onText: (soFar: string) => void,
  signal: AbortSignal,
): Promise<ChatReply> {
  let response: Response;
  try {
    response = await fetch('/api/chat', {
      method: 'POST',
      credentials: 'same-origin',
      headers: { accept: 'text/event-stream', 'content-type': 'application/json' },
      body: JSON.stringify({ agentId, message }),
      signal,
    });
  } catch (error) {
    throw new ApiError(0, (error as Error).name === 'AbortError' ? 'Stopped' : 'The server cannot be reached');
  }
  let soFar = '';
  let reply: ChatReply | undefined;
  let failure: string | undefined;
  await readEventStream(response, (event) => {
    const step = turnStep(event);
    if (step.kind === 'text') onText((soFar += step.text));
    else if (step.kind === 'done') reply = step.reply;
    else if (step.kind === 'error') failure = step.message;
  }).catch((error: unknown) => {
    if (error instanceof ApiError) throw error;
    throw new ApiError(
      0,
      (error as Error).name === 'AbortError' ? 'Stopped' : 'The connection to the server broke off',
    );
  });
  if (failure) throw new ApiError(502, failure);
  if (!reply) throw new ApiError(502, 'The answer ended before the agent finished');
  return reply;
}

/** Whether a key press in the message box sends it, as chat boxes do: Enter sends; Shift+Enter, and Enter while an input method composes, do not. */
export function sendsOnEnter(key: { key: string; shiftKey: boolean; isComposing?: boolean }): boolean {
  return key.key === 'Enter' && !key.shiftKey && !key.isComposing;
}
