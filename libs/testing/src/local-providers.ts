import { EventEmitter } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Test } from 'tap';

/**
 * How the local provider answers for one upstream model. `tool`: a tool call of the first tool the
 * request declared (Gemini: two calls of it, Paris then London) with arguments `{"city":"Paris"}`;
 * `bad-tool`: a tool call whose arguments are not a JSON object.
 */
export type Behaviour = 'ok' | 'error' | 'hang' | 'malformed' | 'drop' | 'tool' | 'bad-tool';

export interface Delivered {
  path: string;
  headers: IncomingMessage['headers'];
  body: Record<string, unknown>;
}

/** A tool call the OpenAI-wire answer makes instead of its text: the tool's name and its arguments. */
export interface ToolCall {
  name: string;
  arguments: Record<string, unknown>;
}

export interface LocalProviders {
  url: string;
  /** Env pointing every provider of the gateway at this server. */
  env: Record<string, string>;
  behaviour: Map<string, Behaviour>;
  /** Upstream models that answer `status` (429, 503, ...) to their next `times` requests, then as their behaviour says. */
  /** The next `times` calls of a model answer `status` (with `retryAfter` as its Retry-After header, when given). */
  failNext: Map<string, { status: number; times: number; retryAfter?: string }>;
  /** API keys answered 401 as a revoked key is (OpenAI's and Anthropic's `{error: {message}}`). */
  revokedKeys: Set<string>;
  delivered: Delivered[];
  /** Fixed answer latency in ms (benchmarks). */
  latencyMs: number;
  /** OpenAI wire: the tool call to answer a request with (as a model deciding to use a tool would), or undefined for the usual answer. */
  callTool: ((delivered: Delivered) => ToolCall | undefined) | undefined;
  /** The first request delivered (already or still to come) that `matches`; rejects after `timeoutMs`. */
  delivery(matches: (delivered: Delivered) => boolean, timeoutMs: number): Promise<Delivered>;
}

const REPLY = 'Hello from the local provider';
const LOOKING = 'Let me look.';

/** The first tool a request declared, in each wire format. */
function declaredTool(body: Record<string, unknown>): string {
  const tools = (body.tools ?? []) as Record<string, unknown>[];
  const first = tools[0] as
    | { name?: string; function?: { name?: string }; functionDeclarations?: { name?: string }[] }
    | undefined;
  return first?.function?.name ?? first?.functionDeclarations?.[0]?.name ?? first?.name ?? 'lookup';
}
const sse = (res: ServerResponse, event: string | null, data: unknown) =>
  res.write(`${event ? `event: ${event}\n` : ''}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`);

/** Breaks the connection once what was written reached the socket (an SSE comment marks the point). */
const dropAfterFlush = (res: ServerResponse) => {
  res.write(': dropping\n\n', () => res.destroy());
};

function openAi(
  res: ServerResponse,
  model: string,
  stream: boolean,
  behaviour: Behaviour,
  tool: string,
  call?: ToolCall,
) {
  if (call) return openAiToolCall(res, model, stream, call.name, JSON.stringify(call.arguments));
  if (behaviour === 'tool') return openAiToolCall(res, model, stream, tool);
  if (!stream) {
    res.writeHead(200, { 'content-type': 'application/json' });
    if (behaviour === 'malformed') return res.end('{"choices": nope');
    return res.end(
      JSON.stringify({
        id: 'chatcmpl-local',
        object: 'chat.completion',
        created: 1,
        model,
        choices: [{ index: 0, message: { role: 'assistant', content: REPLY }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 },
      }),
    );
  }
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const chunk = (delta: object, finish: string | null) => ({
    id: 'chatcmpl-local',
    object: 'chat.completion.chunk',
    created: 1,
    model,
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  sse(res, null, chunk({ role: 'assistant', content: 'Hello ' }, null));
  if (behaviour === 'drop') return dropAfterFlush(res);
  sse(res, null, chunk({ content: 'from the local provider' }, null));
  sse(res, null, chunk({}, 'stop'));
  sse(res, null, {
    id: 'chatcmpl-local',
    object: 'chat.completion.chunk',
    created: 1,
    model,
    choices: [],
    usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 },
  });
  sse(res, null, '[DONE]');
  res.end();
}

function openAiToolCall(res: ServerResponse, model: string, stream: boolean, tool: string, args = '{"city":"Paris"}') {
  const usage = { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 };
  if (!stream) {
    res.writeHead(200, { 'content-type': 'application/json' });
    return res.end(
      JSON.stringify({
        id: 'chatcmpl-local',
        object: 'chat.completion',
        created: 1,
        model,
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: null,
              tool_calls: [{ id: 'call_local_1', type: 'function', function: { name: tool, arguments: args } }],
            },
            finish_reason: 'tool_calls',
          },
        ],
        usage,
      }),
    );
  }
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const chunk = (delta: object, finish: string | null) => ({
    id: 'chatcmpl-local',
    object: 'chat.completion.chunk',
    created: 1,
    model,
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  sse(
    res,
    null,
    chunk(
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ index: 0, id: 'call_local_1', type: 'function', function: { name: tool, arguments: '' } }],
      },
      null,
    ),
  );
  // Some OpenAI-compatible providers repeat the name in every piece of a call.
  sse(res, null, chunk({ tool_calls: [{ index: 0, function: { name: tool, arguments: args } }] }, null));
  sse(res, null, chunk({}, 'tool_calls'));
  sse(res, null, { id: 'chatcmpl-local', object: 'chat.completion.chunk', created: 1, model, choices: [], usage });
  sse(res, null, '[DONE]');
  res.end();
}

/** An Anthropic answer that calls `tool` after a line of text; `bad`: with arguments that are not an object. */
function anthropicToolUse(res: ServerResponse, model: string, stream: boolean, tool: string, bad: boolean) {
  if (!stream) {
    res.writeHead(200, { 'content-type': 'application/json' });
    return res.end(
      JSON.stringify({
        id: 'msg_local',
        type: 'message',
        role: 'assistant',
        model,
        stop_reason: 'tool_use',
        usage: { input_tokens: 13, output_tokens: 9 },
        content: [
          { type: 'text', text: LOOKING },
          { type: 'tool_use', id: 'toolu_local_1', name: tool, input: bad ? 'Paris' : { city: 'Paris' } },
        ],
      }),
    );
  }
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  sse(res, 'message_start', {
    type: 'message_start',
    message: {
      id: 'msg_local',
      type: 'message',
      role: 'assistant',
      model,
      content: [],
      usage: { input_tokens: 13, output_tokens: 1 },
    },
  });
  sse(res, 'content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
  sse(res, 'content_block_delta', {
    type: 'content_block_delta',
    index: 0,
    delta: { type: 'text_delta', text: LOOKING },
  });
  sse(res, 'content_block_stop', { type: 'content_block_stop', index: 0 });
  sse(res, 'content_block_start', {
    type: 'content_block_start',
    index: 1,
    content_block: { type: 'tool_use', id: 'toolu_local_1', name: tool, input: {} },
  });
  sse(res, 'ping', { type: 'ping' });
  sse(res, 'content_block_delta', {
    type: 'content_block_delta',
    index: 1,
    delta: { type: 'input_json_delta', partial_json: '{"city": ' },
  });
  sse(res, 'content_block_delta', {
    type: 'content_block_delta',
    index: 1,
    delta: { type: 'input_json_delta', partial_json: bad ? '"Par' : '"Paris"}' },
  });
  sse(res, 'content_block_stop', { type: 'content_block_stop', index: 1 });
  sse(res, 'message_delta', { type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 9 } });
  sse(res, 'message_stop', { type: 'message_stop' });
  res.end();
}

/**
 * Anthropic's prompt cache as the provider keeps it: each `cache_control` mark (over tools, then
 * system, then messages) ends a prefix; the longest prefix seen before is read from the cache, and
 * the rest up to the last mark is written, at about four bytes a token. The prompt beyond the last
 * mark is the 13 uncached input tokens.
 */
function anthropicCacheUsage(cache: Set<string>, body: Record<string, unknown>) {
  const blocks = (value: unknown) => (Array.isArray(value) ? value : []);
  const parts: unknown[] = [
    ...blocks(body.tools),
    ...blocks(body.system),
    ...blocks(body.messages).flatMap((m) => blocks((m as { content?: unknown }).content)),
  ];
  const prefixes = parts.flatMap((part, i) =>
    part && typeof part === 'object' && 'cache_control' in part ? [JSON.stringify(parts.slice(0, i + 1))] : [],
  );
  if (prefixes.length === 0) return { cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
  const tokens = (prefix: string) => Math.ceil(Buffer.byteLength(prefix) / 4);
  const hit = prefixes.findLast((prefix) => cache.has(prefix));
  const read = hit ? tokens(hit) : 0;
  const written = tokens(prefixes.at(-1)!) - read;
  for (const prefix of prefixes) cache.add(prefix);
  return {
    cache_creation_input_tokens: written,
    cache_read_input_tokens: read,
    cache_creation: { ephemeral_5m_input_tokens: written, ephemeral_1h_input_tokens: 0 },
  };
}

function anthropic(
  res: ServerResponse,
  model: string,
  stream: boolean,
  behaviour: Behaviour,
  tool: string,
  cached: object = {},
) {
  if (behaviour === 'tool' || behaviour === 'bad-tool')
    return anthropicToolUse(res, model, stream, tool, behaviour === 'bad-tool');
  if (!stream) {
    res.writeHead(200, { 'content-type': 'application/json' });
    if (behaviour === 'malformed') return res.end('{"type": "message"}');
    return res.end(
      JSON.stringify({
        id: 'msg_local',
        type: 'message',
        role: 'assistant',
        model,
        content: [{ type: 'text', text: REPLY }],
        stop_reason: 'end_turn',
        usage: { input_tokens: 13, output_tokens: 9, ...cached },
      }),
    );
  }
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  sse(res, 'message_start', {
    type: 'message_start',
    message: {
      id: 'msg_local',
      type: 'message',
      role: 'assistant',
      model,
      content: [],
      usage: { input_tokens: 13, output_tokens: 1, ...cached },
    },
  });
  sse(res, 'content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
  sse(res, 'content_block_delta', {
    type: 'content_block_delta',
    index: 0,
    delta: { type: 'text_delta', text: 'Hello ' },
  });
  if (behaviour === 'drop') return dropAfterFlush(res);
  sse(res, 'content_block_delta', {
    type: 'content_block_delta',
    index: 0,
    delta: { type: 'text_delta', text: 'from the local provider' },
  });
  sse(res, 'content_block_stop', { type: 'content_block_stop', index: 0 });
  sse(res, 'message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 9 } });
  sse(res, 'message_stop', { type: 'message_stop' });
  res.end();
}

/** A Gemini answer with two calls of `tool` (no ids, as Gemini sends them; the first with a thought signature); `bad`: with arguments that are not an object. */
function geminiFunctionCalls(res: ServerResponse, stream: boolean, tool: string, bad: boolean) {
  const calls = [
    { functionCall: { name: tool, args: bad ? 'Paris' : { city: 'Paris' } }, thoughtSignature: 'c2lnbmF0dXJl' },
    { functionCall: { name: tool, args: { city: 'London' } } },
  ];
  const answer = (parts: object[], finish?: string) => ({
    candidates: [{ content: { role: 'model', parts }, ...(finish ? { finishReason: finish } : {}), index: 0 }],
    usageMetadata: { promptTokenCount: 17, candidatesTokenCount: 5, totalTokenCount: 22 },
    modelVersion: 'gemini-local',
    responseId: 'gemini-local-id',
  });
  if (!stream) {
    res.writeHead(200, { 'content-type': 'application/json' });
    return res.end(JSON.stringify(answer([{ text: LOOKING }, ...calls], 'STOP')));
  }
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  sse(res, null, answer([{ text: LOOKING }]));
  sse(res, null, answer(calls.slice(0, 1)));
  sse(res, null, answer(calls.slice(1), 'STOP'));
  res.end();
}

function gemini(res: ServerResponse, stream: boolean, behaviour: Behaviour, tool: string) {
  if (behaviour === 'tool' || behaviour === 'bad-tool')
    return geminiFunctionCalls(res, stream, tool, behaviour === 'bad-tool');
  const part = (text: string, finish?: string) => ({
    candidates: [
      { content: { role: 'model', parts: [{ text }] }, ...(finish ? { finishReason: finish } : {}), index: 0 },
    ],
    usageMetadata: { promptTokenCount: 17, candidatesTokenCount: finish ? 5 : 2, totalTokenCount: finish ? 22 : 19 },
    modelVersion: 'gemini-local',
    responseId: 'gemini-local-id',
  });
  if (!stream) {
    res.writeHead(200, { 'content-type': 'application/json' });
    if (behaviour === 'malformed') return res.end('not json at all');
    return res.end(JSON.stringify(part(REPLY, 'STOP')));
  }
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  sse(res, null, part('Hello '));
  if (behaviour === 'drop') return dropAfterFlush(res);
  sse(res, null, part('from the local provider', 'STOP'));
  res.end();
}

/**
 * OpenAI's Responses API. Its prompt cache is automatic: an `instructions` text seen before (of at
 * least 1024 tokens, at about four bytes a token) is read from the cache, as `cached_tokens`.
 */
function openAiResponses(res: ServerResponse, model: string, body: Record<string, unknown>, cache: Set<string>) {
  const instructions = typeof body.instructions === 'string' ? body.instructions : '';
  const prefixTokens = Math.ceil(Buffer.byteLength(instructions) / 4);
  const cached = prefixTokens >= 1024 && cache.has(instructions) ? prefixTokens : 0;
  if (prefixTokens >= 1024) cache.add(instructions);
  const usage = {
    input_tokens: prefixTokens + 11,
    input_tokens_details: { cached_tokens: cached },
    output_tokens: 7,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: prefixTokens + 18,
  };
  const message = {
    id: 'msg_local',
    type: 'message',
    status: 'completed',
    role: 'assistant',
    content: [{ type: 'output_text', text: REPLY, annotations: [] }],
  };
  const response = (status: string, output: object[], withUsage: boolean) => ({
    id: 'resp_local',
    object: 'response',
    created_at: 1,
    status,
    model,
    output,
    ...(withUsage ? { usage } : { usage: null }),
  });
  if (body.stream !== true) {
    res.writeHead(200, { 'content-type': 'application/json' });
    return res.end(JSON.stringify(response('completed', [message], true)));
  }
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  let sequence = 0;
  const event = (type: string, data: object) => sse(res, type, { type, sequence_number: sequence++, ...data });
  event('response.created', { response: response('in_progress', [], false) });
  event('response.output_item.added', { output_index: 0, item: { ...message, status: 'in_progress', content: [] } });
  event('response.output_text.delta', { item_id: 'msg_local', output_index: 0, content_index: 0, delta: 'Hello ' });
  event('response.output_text.delta', {
    item_id: 'msg_local',
    output_index: 0,
    content_index: 0,
    delta: 'from the local provider',
  });
  event('response.output_item.done', { output_index: 0, item: message });
  event('response.completed', { response: response('completed', [message], true) });
  res.end();
}

/** OpenAI's embeddings: a vector per input, usage counted at about four bytes a token. */
function openAiEmbeddings(res: ServerResponse, model: string, body: Record<string, unknown>) {
  const inputs =
    Array.isArray(body.input) && (typeof body.input[0] === 'string' || Array.isArray(body.input[0]))
      ? body.input
      : [body.input];
  const tokens = inputs.reduce(
    (n: number, input) =>
      n +
      (typeof input === 'string' ? Math.ceil(Buffer.byteLength(input) / 4) : Array.isArray(input) ? input.length : 0),
    0,
  );
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(
    JSON.stringify({
      object: 'list',
      model,
      data: inputs.map((_, index) => ({ object: 'embedding', index, embedding: [0.1, -0.2, 0.3] })),
      usage: { prompt_tokens: tokens, total_tokens: tokens },
    }),
  );
}

/**
 * One local server speaking the real wire formats of every provider, under a path prefix each:
 * /openai, /openrouter, /groq and /minimax (OpenAI chat completions; Responses and embeddings too), /anthropic (Messages), /gemini.
 */
export async function startLocalProviders(t: Test): Promise<LocalProviders> {
  const state = {
    behaviour: new Map<string, Behaviour>(),
    failNext: new Map<string, { status: number; times: number; retryAfter?: string }>(),
    revokedKeys: new Set<string>(),
    delivered: [] as Delivered[],
    latencyMs: 0,
    callTool: undefined as LocalProviders['callTool'],
  };
  const deliveries = new EventEmitter();
  const promptCache = new Set<string>();
  const responsesCache = new Set<string>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '';
      if (req.method === 'GET' && path.endsWith('/models')) {
        res.writeHead(state.behaviour.get('health') === 'error' ? 503 : 200, { 'content-type': 'application/json' });
        return res.end('{"data":[]}');
      }
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        /* recorded empty */
      }
      const delivered = { path, headers: req.headers, body };
      state.delivered.push(delivered);
      deliveries.emit('delivered', delivered);
      const geminiMatch = /^\/gemini\/v1beta\/models\/([^:]+):(generateContent|streamGenerateContent)/.exec(path);
      const model = geminiMatch ? decodeURIComponent(geminiMatch[1]!) : String(body.model);
      const behaviour = state.behaviour.get(model) ?? 'ok';
      if (behaviour === 'hang') return;
      const key = String(
        req.headers['x-api-key'] ??
          req.headers['x-goog-api-key'] ??
          req.headers.authorization?.replace(/^Bearer /, '') ??
          '',
      );
      if (state.revokedKeys.has(key)) {
        res.writeHead(401, { 'content-type': 'application/json' });
        return res.end(
          JSON.stringify({
            error: {
              type: 'invalid_request_error',
              code: 'invalid_api_key',
              message: `Incorrect API key provided: ${key.slice(0, 3)}...${key.slice(-4)}. The key was revoked.`,
            },
          }),
        );
      }
      const failing = state.failNext.get(model);
      if (failing && failing.times > 0) {
        failing.times--;
        res.writeHead(failing.status, {
          'content-type': 'application/json',
          ...(failing.retryAfter !== undefined && { 'retry-after': failing.retryAfter }),
        });
        return res.end(
          JSON.stringify({ error: { message: failing.status === 429 ? 'rate limited, slow down' : 'overloaded' } }),
        );
      }
      if (behaviour === 'error') {
        res.writeHead(500, { 'content-type': 'application/json' });
        return res.end('{"error":{"message":"upstream exploded"}}');
      }
      const answer = () => {
        const tool = declaredTool(body);
        if (geminiMatch) return gemini(res, geminiMatch[2] === 'streamGenerateContent', behaviour, tool);
        if (path.endsWith('/v1/responses')) return openAiResponses(res, model, body, responsesCache);
        if (path.endsWith('/v1/embeddings')) return openAiEmbeddings(res, model, body);
        if (path.startsWith('/anthropic/v1/messages'))
          return anthropic(res, model, body.stream === true, behaviour, tool, anthropicCacheUsage(promptCache, body));
        return openAi(res, model, body.stream === true, behaviour, tool, state.callTool?.(delivered));
      };
      if (state.latencyMs > 0) setTimeout(answer, state.latencyMs);
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const env: Record<string, string> = {};
  for (const name of ['openai', 'openrouter', 'groq', 'minimax']) {
    env[`${name.toUpperCase()}_BASE_URL`] = `${url}/${name}/v1`;
    env[`${name.toUpperCase()}_API_KEY`] = `test-${name}-key`;
  }
  Object.assign(env, {
    ANTHROPIC_BASE_URL: `${url}/anthropic`,
    ANTHROPIC_API_KEY: 'test-anthropic-key',
    GEMINI_BASE_URL: `${url}/gemini`,
    GEMINI_API_KEY: 'test-gemini-key',
  });
  const delivery = (matches: (delivered: Delivered) => boolean, timeoutMs: number) => {
    const found = state.delivered.find(matches);
    if (found) return Promise.resolve(found);
    return new Promise<Delivered>((resolve, reject) => {
      const onDelivered = (delivered: Delivered) => {
        if (!matches(delivered)) return;
        clearTimeout(timer);
        deliveries.off('delivered', onDelivered);
        resolve(delivered);
      };
      const timer = setTimeout(() => {
        deliveries.off('delivered', onDelivered);
        reject(new Error(`no such request reached the local provider within ${timeoutMs} ms`));
      }, timeoutMs);
      deliveries.on('delivered', onDelivered);
    });
  };
  return Object.assign(state, { url, env, delivery }) as LocalProviders;
}
