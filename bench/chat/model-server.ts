// The model server of bench/chat, in a process of its own: OpenAI chat completions answered at once,
// whole or as Server-Sent Events as the request asks. Counts the requests it answered (GET /count)
// and tells its parent its port over the IPC channel.
import { createServer } from 'node:http';

const CONTENT = 'benchmark answer';
const usage = { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 };
let answered = 0;
const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    if (req.method === 'GET' && req.url === '/count')
      return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ answered }));
    if (req.method === 'GET')
      return res.writeHead(200, { 'content-type': 'application/json' }).end('{"object":"list","data":[]}');
    let body: { model?: string; stream?: boolean } = {};
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      /* answered as a request without options */
    }
    answered++;
    const base = { id: 'chatcmpl-bench', created: 1, model: body.model ?? 'gpt-4o-mini' };
    if (!body.stream) {
      return res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          ...base,
          object: 'chat.completion',
          choices: [{ index: 0, message: { role: 'assistant', content: CONTENT }, finish_reason: 'stop' }],
          usage,
        }),
      );
    }
    const chunk = (choices: object[], extra = {}) =>
      `data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices, ...extra })}\n\n`;
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(
      chunk([{ index: 0, delta: { role: 'assistant', content: CONTENT }, finish_reason: null }]) +
        chunk([{ index: 0, delta: {}, finish_reason: 'stop' }]) +
        chunk([], { usage }) +
        'data: [DONE]\n\n',
    );
  });
});
server.keepAliveTimeout = 120_000;
server.listen(0, '127.0.0.1', () => process.send?.({ port: (server.address() as { port: number }).port }));
process.on('disconnect', () => process.exit(0));
