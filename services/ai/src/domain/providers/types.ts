export interface ChatTurn {
  role: string;
  content: string;
}

export interface ChatRequest {
  messages: ChatTurn[];
  temperature?: number;
  top_p?: number;
  max_tokens?: number;
  /** An OpenAI-format body from a hosted agent: OpenAI-compatible providers receive it as is (tools and all), the others its text. */
  openAiBody?: Record<string, unknown>;
}

export interface TokenUsage {
  input: number;
  output: number;
}

export interface Completion {
  id: string;
  content: string;
  finishReason: string;
  /** null when the provider reported none. */
  usage: TokenUsage | null;
  /** The provider's own body, when it is already in the OpenAI format. */
  openAiBody?: Record<string, unknown>;
}

export type StreamEvent =
  | { type: 'delta'; text: string; openAiChunk?: Record<string, unknown> }
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
