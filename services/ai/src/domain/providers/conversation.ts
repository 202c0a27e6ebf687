import { AiErrors } from '../../errors.ts';
import type { ChatRequest, ToolCall } from './types.ts';
import { textOf } from './wire.ts';

/** A function the model may call, as the caller declared it (OpenAI `tools[].function`). */
export interface ToolDefinition {
  name: string;
  description?: string;
  /** JSON Schema of the arguments object. */
  parameters?: Record<string, unknown>;
}

/** OpenAI `tool_choice`: `required` means some tool, `{name}` that one. */
export type ToolChoice = 'auto' | 'none' | 'required' | { name: string };

/** A call of an earlier assistant turn, its arguments parsed (providers other than OpenAI want an object). */
export interface PastToolCall extends ToolCall {
  input: Record<string, unknown>;
}

export type Turn =
  | { role: 'user'; text: string }
  | { role: 'assistant'; text: string; toolCalls: PastToolCall[] }
  /** A tool's result, with the name of the call it answers (Gemini matches results by name). */
  | { role: 'tool'; toolCallId: string; name: string; text: string };

/** A chat request as provider-neutral turns, for the providers whose wire format is not OpenAI's. */
export interface Conversation {
  system: string;
  turns: Turn[];
  tools: ToolDefinition[];
  toolChoice: ToolChoice | undefined;
  /** false: at most one tool call per answer. */
  parallelToolCalls: boolean | undefined;
}

/** A JSON object (not an array, not null): what tool call arguments must be. */
export const isJsonObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Arguments of a tool call the caller sends back: a JSON object, or empty for none. */
function argumentsOf(text: unknown, where: string): Record<string, unknown> {
  if (text === undefined || text === null || text === '') return {};
  if (typeof text === 'string') {
    try {
      const value = JSON.parse(text);
      if (isJsonObject(value)) return value;
    } catch {
      /* refused below */
    }
  }
  throw AiErrors.invalidToolTurn(`${where}.function.arguments must be a JSON object`);
}

function pastToolCalls(calls: unknown, where: string): PastToolCall[] {
  if (calls === undefined || calls === null) return [];
  if (!Array.isArray(calls)) throw AiErrors.invalidToolTurn(`${where}.tool_calls must be an array`);
  return calls.map((call, i) => {
    const at = `${where}.tool_calls[${i}]`;
    const fn = isJsonObject(call) ? call.function : undefined;
    if (
      !isJsonObject(call) ||
      typeof call.id !== 'string' ||
      call.id === '' ||
      !isJsonObject(fn) ||
      typeof fn.name !== 'string' ||
      fn.name === ''
    ) {
      throw AiErrors.invalidToolTurn(`${at} needs an id and a function name`);
    }
    const google =
      isJsonObject(call.extra_content) && isJsonObject(call.extra_content.google)
        ? call.extra_content.google
        : undefined;
    const signature = typeof google?.thought_signature === 'string' ? google.thought_signature : undefined;
    const input = argumentsOf(fn.arguments, at);
    return { id: call.id, name: fn.name, arguments: JSON.stringify(input), input, ...(signature ? { signature } : {}) };
  });
}

function toolsOf(tools: unknown): ToolDefinition[] {
  if (!Array.isArray(tools)) return [];
  return tools.flatMap((tool) => {
    const fn = isJsonObject(tool) && (tool.type === undefined || tool.type === 'function') ? tool.function : undefined;
    if (!isJsonObject(fn) || typeof fn.name !== 'string') return [];
    return [
      {
        name: fn.name,
        ...(typeof fn.description === 'string' && fn.description ? { description: fn.description } : {}),
        ...(isJsonObject(fn.parameters) ? { parameters: fn.parameters } : {}),
      },
    ];
  });
}

function toolChoiceOf(choice: unknown): ToolChoice | undefined {
  if (choice === 'auto' || choice === 'none' || choice === 'required') return choice;
  if (isJsonObject(choice) && isJsonObject(choice.function) && typeof choice.function.name === 'string')
    return { name: choice.function.name };
  return undefined;
}

/**
 * The turns of a request. A hosted agent's OpenAI body keeps its tool calls and tool results; a
 * tool result must answer a call of an earlier assistant turn, and call arguments must be JSON
 * objects (400 otherwise, whichever provider serves the call).
 */
export function conversationOf(request: ChatRequest): Conversation {
  const body = request.openAiBody;
  const messages = (body ? (Array.isArray(body.messages) ? body.messages : []) : request.messages) as Record<
    string,
    unknown
  >[];
  const system: string[] = [];
  const turns: Turn[] = [];
  const callNames = new Map<string, string>();
  messages.forEach((message, i) => {
    const where = `messages[${i}]`;
    const role = String(message.role ?? 'user');
    const text = textOf(message.content);
    if (role === 'system' || role === 'developer') {
      if (text) system.push(text);
    } else if (role === 'assistant') {
      const toolCalls = pastToolCalls(message.tool_calls, where);
      for (const call of toolCalls) callNames.set(call.id, call.name);
      if (text || toolCalls.length) turns.push({ role: 'assistant', text, toolCalls });
    } else if (role === 'tool') {
      const id = message.tool_call_id;
      const name = typeof id === 'string' ? callNames.get(id) : undefined;
      if (typeof id !== 'string' || name === undefined)
        throw AiErrors.invalidToolTurn(`${where}.tool_call_id must name a tool call of an earlier assistant turn`);
      turns.push({ role: 'tool', toolCallId: id, name, text });
    } else if (text) {
      turns.push({ role: 'user', text });
    }
  });
  return {
    system: system.join('\n\n'),
    turns,
    tools: toolsOf(body?.tools),
    toolChoice: toolChoiceOf(body?.tool_choice),
    parallelToolCalls: typeof body?.parallel_tool_calls === 'boolean' ? body.parallel_tool_calls : undefined,
  };
}
