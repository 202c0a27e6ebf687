import { createServer } from 'node:http';
import type { Test } from 'tap';

/**
 * An OpenAI-compatible chat server for a real gateway's turns: each completion answers
 * `answer(requestBody)` (as JSON, or as chunks when the gateway streams), and every request body
 * is kept in `requests`. Closed when `t` ends.
 */
export async function modelServer(t: Test, answer: (body: string) => string) {
  const requests: string[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      if (req.url?.endsWith('/models'))
        return res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ object: 'list', data: [] }));
      const request = (body ? JSON.parse(body) : {}) as { model?: string; stream?: boolean };
      requests.push(body);
      const reply = answer(body);
      const usage = { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 };
      if (!request.stream) {
        return res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            id: 'c1',
            object: 'chat.completion',
            created: 1,
            model: request.model,
            choices: [{ index: 0, message: { role: 'assistant', content: reply }, finish_reason: 'stop' }],
            usage,
          }),
        );
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const chunk = (choice: object, extra = {}) =>
        `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: request.model, choices: [{ index: 0, ...choice }], ...extra })}\n\n`;
      res.write(chunk({ delta: { role: 'assistant', content: reply }, finish_reason: null }));
      res.write(chunk({ delta: {}, finish_reason: 'stop' }, { usage }));
      res.end('data: [DONE]\n\n');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(
    () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(resolve);
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, requests };
}
