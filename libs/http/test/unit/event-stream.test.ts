import t from 'tap';
import Fastify from 'fastify';
import { eventStreams, openEventStream } from '../../src/event-stream.ts';

t.test('events are framed one field per line, JSON or text as asked', async (t) => {
  const app = Fastify();
  t.teardown(() => app.close());
  app.get('/', async (_request, reply) => {
    const stream = openEventStream(reply);
    stream.send('done', { content: 'two\nlines' });
    stream.sendText(undefined, 'first\nsecond');
    stream.sendText(undefined, '[DONE]');
    stream.end();
    return reply;
  });
  const res = await app.inject({ method: 'GET', url: '/' });
  t.equal(res.statusCode, 200);
  t.match(res.headers['content-type'], /^text\/event-stream/);
  t.equal(
    res.body,
    'event: done\ndata: {"content":"two\\nlines"}\n\ndata: first\ndata: second\n\ndata: [DONE]\n\n',
    'a payload line break never ends its event early',
  );
});

t.test('a kept-alive stream says it is connected, carries its headers, and ends when the app closes', async (t) => {
  const app = Fastify();
  const open = eventStreams(app);
  let left: AbortSignal | undefined;
  app.get('/', async (request, reply) => {
    const stream = open(reply, { keepAliveMs: 60_000, headers: { 'x-request-id': request.id } });
    left = stream.left;
    stream.send('ready', {});
    return reply;
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as { port: number };
  const res = await fetch(`http://127.0.0.1:${port}/`);
  t.ok(res.headers.get('x-request-id'));
  const reader = res.body!.getReader();
  const first = new TextDecoder().decode((await reader.read()).value);
  t.match(first, /^: connected\n\n/);
  await app.close();
  let rest = '';
  for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read())
    rest += new TextDecoder().decode(chunk.value);
  t.match(first + rest, /event: ready\ndata: \{\}\n\n/);
  t.equal(left?.aborted, true, 'closing the app ended the stream');
});
