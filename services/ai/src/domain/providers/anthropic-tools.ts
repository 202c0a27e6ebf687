import { UpstreamError } from '@agentyard/http';
import { isJsonObject, type Conversation, type ToolChoice } from './conversation.ts';
import type { ToolCall, ToolCallDelta } from './types.ts';

type Block =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> }
  | { type: 'tool_result'; tool_use_id: string; content?: string };

interface Message {
  role: 'user' | 'assistant';
  content: Block[] | string;
}

const malformed = () => new UpstreamError('provider sent a malformed tool call');

/**
 * Messages API turns: assistant tool calls become `tool_use` blocks, tool results `tool_result`
 * blocks of a user turn. Turns of one role in a row are merged (the API wants roles to alternate),
 * a user turn's tool results first, as the API requires.
 */
function anthropicMessages(conversation: Conversation): Message[] {
  const merged: { role: 'user' | 'assistant'; content: Block[] }[] = [];
  for (const turn of conversation.turns) {
    const role = turn.role === 'assistant' ? 'assistant' : 'user';
    const blocks: Block[] = [];
    if (turn.role === 'tool')
      blocks.push({ type: 'tool_result', tool_use_id: turn.toolCallId, ...(turn.text ? { content: turn.text } : {}) });
    else if (turn.text.trim()) blocks.push({ type: 'text', text: turn.text });
    if (turn.role === 'assistant')
      for (const call of turn.toolCalls)
        blocks.push({ type: 'tool_use', id: call.id, name: call.name, input: call.input });
    if (blocks.length === 0) continue;
    const last = merged.at(-1);
    if (last?.role === role) last.content.push(...blocks);
    else merged.push({ role, content: blocks });
  }
  return merged.map(({ role, content }) => {
    if (content.length === 1 && content[0]!.type === 'text') return { role, content: content[0]!.text };
    const results = content.filter((b) => b.type === 'tool_result');
    return {
      role,
      content: results.length ? [...results, ...content.filter((b) => b.type !== 'tool_result')] : content,
    };
  });
}

function anthropicToolChoice(
  choice: ToolChoice | undefined,
  parallel: boolean | undefined,
): Record<string, unknown> | undefined {
  const single = parallel === false ? { disable_parallel_tool_use: true } : {};
  if (choice === 'none') return { type: 'none' };
  if (choice === 'required') return { type: 'any', ...single };
  if (typeof choice === 'object') return { type: 'tool', name: choice.name, ...single };
  if (choice === 'auto' || parallel === false) return { type: 'auto', ...single };
  return undefined;
}

/** The `system`, `messages`, `tools` and `tool_choice` of a Messages API request. */
export function anthropicTurns(conversation: Conversation): Record<string, unknown> {
  const tools = conversation.tools.map((tool) => ({
    name: tool.name,
    ...(tool.description ? { description: tool.description } : {}),
    input_schema: { type: 'object', ...(tool.parameters ?? { properties: {} }) },
  }));
  const toolChoice = tools.length
    ? anthropicToolChoice(conversation.toolChoice, conversation.parallelToolCalls)
    : undefined;
  return {
    messages: anthropicMessages(conversation),
    ...(conversation.system ? { system: conversation.system } : {}),
    ...(tools.length ? { tools } : {}),
    ...(toolChoice ? { tool_choice: toolChoice } : {}),
  };
}

/** Text and tool calls of a Messages API answer's content blocks. */
export function anthropicAnswer(content: unknown[]): { text: string; toolCalls: ToolCall[] } {
  let text = '';
  const toolCalls: ToolCall[] = [];
  for (const block of content) {
    if (!isJsonObject(block)) throw new UpstreamError('provider sent a malformed body');
    if (block.type === 'text') text += typeof block.text === 'string' ? block.text : '';
    else if (block.type === 'tool_use') {
      if (
        typeof block.id !== 'string' ||
        !block.id ||
        typeof block.name !== 'string' ||
        !block.name ||
        !isJsonObject(block.input)
      )
        throw malformed();
      toolCalls.push({ id: block.id, name: block.name, arguments: JSON.stringify(block.input) });
    }
  }
  return { text, toolCalls };
}

/**
 * Streamed `tool_use` blocks as OpenAI tool call pieces: the block's start gives the call's id and
 * name, each `input_json_delta` more arguments text; at the block's end the arguments must parse
 * to an object (a call streamed with no input at all gets `{}`).
 */
export class AnthropicToolStream {
  private readonly open = new Map<number, { index: number; json: string }>();
  private calls = 0;

  start(blockIndex: unknown, block: unknown): ToolCallDelta | null {
    if (!isJsonObject(block) || block.type !== 'tool_use') return null;
    if (
      typeof blockIndex !== 'number' ||
      typeof block.id !== 'string' ||
      !block.id ||
      typeof block.name !== 'string' ||
      !block.name ||
      this.open.has(blockIndex)
    )
      throw malformed();
    const json = isJsonObject(block.input) && Object.keys(block.input).length ? JSON.stringify(block.input) : '';
    const index = this.calls++;
    this.open.set(blockIndex, { index, json });
    return { index, id: block.id, name: block.name, arguments: json };
  }

  delta(blockIndex: unknown, partialJson: unknown): ToolCallDelta {
    const call = typeof blockIndex === 'number' ? this.open.get(blockIndex) : undefined;
    if (!call || typeof partialJson !== 'string') throw malformed();
    call.json += partialJson;
    return { index: call.index, arguments: partialJson };
  }

  stop(blockIndex: unknown): ToolCallDelta | null {
    const call = typeof blockIndex === 'number' ? this.open.get(blockIndex) : undefined;
    if (!call) return null;
    this.open.delete(blockIndex as number);
    if (call.json === '') return { index: call.index, arguments: '{}' };
    let input: unknown;
    try {
      input = JSON.parse(call.json);
    } catch {
      throw malformed();
    }
    if (!isJsonObject(input)) throw malformed();
    return null;
  }

  get called(): boolean {
    return this.calls > 0;
  }
}
