export interface ChatTurn {
  role: string;
  content: string;
}

export interface ChatRequest {
  messages: ChatTurn[];
  temperature?: number;
  top_p?: number;
  max_tokens?: number;
  /** An OpenAI-format body from a hosted agent: OpenAI-compatible providers receive it as is, the others a translation (tools and tool turns included). */
  openAiBody?: Record<string, unknown>;
}

export interface TokenUsage {
  /** Every prompt token, those read from or written to the provider's prompt cache included. */
  input: number;
  output: number;
  /** Prompt tokens served from the provider's cache (part of `input`). */
  cacheRead?: number;
  /** Prompt tokens written to the provider's cache (part of `input`); `cacheWrite1h` of them for an hour. */
  cacheWrite?: number;
  cacheWrite1h?: number;
}

/** A tool call the model made, in the OpenAI shape: `arguments` is a JSON text. */
export interface ToolCall {
  id: string;
  name: string;
  arguments: string;
  /** Gemini's thought signature for the call, which it wants back with the call in the next turn. */
  signature?: string;
}

/** A piece of a streamed tool call: the first piece of a call has its id and name, later ones more `arguments` text. */
export interface ToolCallDelta {
  index: number;
  id?: string;
  name?: string;
  arguments: string;
  signature?: string;
}

export interface Completion {
  id: string;
  content: string;
  /** The tools the model called in its answer (empty when none). */
  toolCalls: ToolCall[];
  finishReason: string;
  /** null when the provider reported none. */
  usage: TokenUsage | null;
  /** The provider's own body, when it is already in the OpenAI format. */
  openAiBody?: Record<string, unknown>;
}

export type StreamEvent =
  | { type: 'delta'; text: string; toolCalls?: ToolCallDelta[]; openAiChunk?: Record<string, unknown> }
  | { type: 'finish'; reason: string }
  | { type: 'usage'; usage: TokenUsage };

export interface ProviderEndpoint {
  baseUrl: string;
  apiKey: string;
  timeoutMs: number;
  streamTimeoutMs: number;
  defaultMaxTokens: number;
}

/** One wire format. `openStream` resolves once the provider accepted the call, so a refusal can still fall back. */
export interface ProviderClient {
  complete(upstreamModel: string, request: ChatRequest): Promise<Completion>;
  openStream(upstreamModel: string, request: ChatRequest): Promise<AsyncIterable<StreamEvent>>;
}
