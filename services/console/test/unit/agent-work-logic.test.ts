import t from 'tap';
import { ApiError } from '../../src/api.ts';
import { sendsOnEnter, turnStep } from '../../src/chat.ts';
import { mergeLogLines, parseLogLine, plainText, streamErrorOf } from '../../src/log-lines.ts';
import { bucketLabel, bytes, hasValues, metricSeries, percent } from '../../src/metrics.ts';
import { eventStreamParser, readEventStream, type StreamEvent } from '../../src/sse.ts';
import type { AgentLogLine, MetricsSample } from '../../src/types.ts';

// The plain logic of the agent's pages: the event-stream format, a streamed chat turn, the log
// lines kept, the metrics as charts want them.

const parsed = (...chunks: string[]) => {
  const events: StreamEvent[] = [];
  const parser = eventStreamParser((event) => events.push(event));
  for (const chunk of chunks) parser.push(chunk);
  return events;
};

t.test('the event-stream format, however the text is cut', async (t) => {
  const wire =
    ': connected\n\nevent: delta\ndata: {"content":"Hel"}\n\nevent: delta\ndata: {"content":"lo"}\n\n: keep-alive\n\nevent: done\ndata: {"a":1}\n\n';
  const whole = parsed(wire);
  t.same(
    whole,
    [
      { event: 'delta', data: '{"content":"Hel"}' },
      { event: 'delta', data: '{"content":"lo"}' },
      { event: 'done', data: '{"a":1}' },
    ],
    'comments are skipped, each event once',
  );
  t.same(parsed(...wire.split('')), whole, 'one character at a time: the same events');
  t.same(parsed(wire.replaceAll('\n', '\r\n')), whole, 'CRLF line ends');
  const crlfCut = wire.replaceAll('\n', '\r\n');
  t.same(parsed(crlfCut.slice(0, 30), crlfCut.slice(30)), whole, 'a CRLF cut between its halves is one line end');
  t.same(
    parsed('data: one\ndata: two\n\n'),
    [{ event: 'message', data: 'one\ntwo' }],
    'data lines join with a newline; no event name is "message"',
  );
  t.same(parsed('data:no space\n\n'), [{ event: 'message', data: 'no space' }]);
  t.same(parsed('event: ready\n\n'), [], 'an event without data is not dispatched');
  t.same(
    parsed('event: delta\ndata: {"content":"cut'),
    [],
    'an event the stream ends in the middle of is not dispatched',
  );
  t.same(
    parsed('id: 7\nretry: 100\nevent: line\ndata: x\n\n'),
    [{ event: 'line', data: 'x' }],
    'other fields are ignored',
  );
});

t.test("an event-stream answer read to its end, and a refusal in the API's words", async (t) => {
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      const bytes = new TextEncoder().encode('event: delta\ndata: {"content":"€"}\n\nevent: done\ndata: {}\n\n');
      // A multi-byte character split across chunks still decodes.
      controller.enqueue(bytes.slice(0, 30));
      controller.enqueue(bytes.slice(30));
      controller.close();
    },
  });
  const events: StreamEvent[] = [];
  await readEventStream(new Response(body, { headers: { 'content-type': 'text/event-stream' } }), (e) =>
    events.push(e),
  );
  t.same(events, [
    { event: 'delta', data: '{"content":"€"}' },
    { event: 'done', data: '{}' },
  ]);
  const refused = new Response(JSON.stringify({ error: 'Agent is not running', code: 'AGENT_NOT_RUNNING' }), {
    status: 409,
    headers: { 'content-type': 'application/json' },
  });
  await t.rejects(
    readEventStream(refused, () => t.fail('no event')),
    new ApiError(409, 'Agent is not running', 'AGENT_NOT_RUNNING'),
  );
  const refusedError = await readEventStream(
    new Response('{"error":"Agent is not running","code":"AGENT_NOT_RUNNING"}', { status: 409 }),
    () => undefined,
  ).catch((e: unknown) => e);
  t.match(refusedError, { status: 409, code: /^AGENT_NOT_RUNNING$/, message: 'Agent is not running' });
  t.match(await readEventStream(new Response('<html>', { status: 502 }), () => undefined).catch((e: unknown) => e), {
    status: 502,
    message: 'The server answered 502: try again in a moment',
  });
});

t.test("a chat turn's events: text as it comes, the finished reply, the gateway breaking off", async (t) => {
  t.same(turnStep({ event: 'delta', data: '{"content":"Hello "}' }), { kind: 'text', text: 'Hello ' });
  const reply = {
    id: 'r1',
    agentId: 'a1',
    sessionKey: 'agentyard:web:u1',
    message: { role: 'assistant', content: 'Hello there' },
  };
  t.same(turnStep({ event: 'done', data: JSON.stringify(reply) }), { kind: 'done', reply });
  t.same(turnStep({ event: 'error', data: '{"error":"Agent gateway did not answer in time"}' }), {
    kind: 'error',
    message: 'Agent gateway did not answer in time',
  });
  t.same(turnStep({ event: 'error', data: 'garbage' }), { kind: 'error', message: 'The agent stopped answering' });
  t.same(turnStep({ event: 'delta', data: '{"content":7}' }), { kind: 'none' }, 'a delta without text changes nothing');
  t.same(
    turnStep({ event: 'done', data: '{"message":{}}' }),
    { kind: 'none' },
    'a done without the answer is not the end',
  );
  t.same(turnStep({ event: 'message', data: '{}' }), { kind: 'none' });
});

const line = (time: string, text: string, stream: 'stdout' | 'stderr' = 'stdout'): AgentLogLine => ({
  time: `2026-11-25T10:00:${time}.000Z`,
  stream,
  text,
});

t.test('log lines: history and stream merged in time order, each once, the newest kept', async (t) => {
  const history = [line('01', 'a'), line('02', 'b'), line('02', 'c', 'stderr')];
  // The stream opened in second 02 sends that second's lines again.
  const streamed = [line('02', 'b'), line('02', 'c', 'stderr'), line('03', 'd')];
  t.same(
    mergeLogLines(history, streamed).map((l) => l.text),
    ['a', 'b', 'c', 'd'],
  );
  t.same(
    mergeLogLines(streamed, history).map((l) => l.text),
    ['a', 'b', 'c', 'd'],
    'history merged under lines that came first: time order',
  );
  t.same(
    mergeLogLines(history, [line('02', 'b', 'stderr')]).map((l) => `${l.stream}:${l.text}`),
    ['stdout:a', 'stdout:b', 'stderr:c', 'stderr:b'],
    'the same text on the other stream is another line',
  );
  const same = mergeLogLines(history, [line('01', 'a')]);
  t.equal(same, history, 'nothing new: the same list (no re-render)');
  t.equal(mergeLogLines(history, []), history);
  const many = Array.from({ length: 30 }, (_, i) => line(String(i).padStart(2, '0'), `l${i}`));
  t.same(
    mergeLogLines(many.slice(0, 20), many.slice(20), 25).map((l) => l.text),
    many.slice(5).map((l) => l.text),
    'at most max lines: the oldest go',
  );
  t.same(parseLogLine('{"time":"2026-11-25T10:00:01.000Z","stream":"stderr","text":"x"}'), {
    time: '2026-11-25T10:00:01.000Z',
    stream: 'stderr',
    text: 'x',
  });
  t.equal(parseLogLine('{"time":"t","stream":"stdin","text":"x"}'), undefined);
  t.equal(parseLogLine('nope'), undefined);
  t.equal(parseLogLine('null'), undefined);
  t.equal(
    streamErrorOf('{"error":"The container engine stopped sending the agent\'s output"}'),
    "The container engine stopped sending the agent's output",
  );
  t.equal(streamErrorOf('{}'), 'The live output stopped');
  t.equal(streamErrorOf('not json'), 'The live output stopped');
  t.equal(
    plainText('\u001b[90m2026-11-26T12:10:44.294+00:00\u001b[39m \u001b[33m[agent/embedded]\u001b[39m ready'),
    '2026-11-26T12:10:44.294+00:00 [agent/embedded] ready',
    'colours are dropped',
  );
  t.equal(
    plainText('\u001b]8;;https://docs.openclaw.ai\u0007docs\u001b]8;;\u0007 and \u001b[1;31mbold red\u001b[0m'),
    'docs and bold red',
    'links and attributes too',
  );
  t.equal(plainText('plain [redacted] text'), 'plain [redacted] text', 'nothing else changes');
});

t.test('metrics: nulls stay gaps, labels fit the range', async (t) => {
  const point = (time: string, cpuPercent: number | null, messages: number | null): MetricsSample => ({
    time,
    cpuPercent,
    memoryBytes: null,
    messages,
    tokens: null,
    costUsd: null,
    errors: null,
  });
  const points = [
    point('2026-11-25T10:00:00.000Z', 12.5, 0),
    point('2026-11-25T10:15:00.000Z', null, null),
    point('2026-11-25T10:30:00.000Z', 3, 2),
  ];
  t.same(
    metricSeries(points, (p) => p.cpuPercent),
    [
      [1795600800, 1795601700, 1795602600],
      [12.5, null, 3],
    ],
  );
  t.same(metricSeries(points, (p) => p.messages)[1], [0, null, 2], 'a zero is a zero, a null a gap');
  t.equal(
    hasValues(points, (p) => p.memoryBytes),
    false,
  );
  t.equal(
    hasValues(points, (p) => p.cpuPercent),
    true,
  );
  t.equal(bucketLabel('1h', '2026-11-25T10:15:00.000Z'), '10:15');
  t.equal(bucketLabel('24h', '2026-11-25T22:45:00.000Z'), '22:45');
  t.equal(bucketLabel('7d', '2026-11-25T06:00:00.000Z'), 'Nov 25 06:00');
  t.equal(bucketLabel('30d', '2026-11-25T18:00:00.000Z'), 'Nov 25');
  t.equal(bucketLabel('1h', 'garbage'), 'garbage');
  t.equal(bytes(512), '512 B');
  t.equal(bytes(1536), '1.5 KB');
  t.equal(bytes(300 * 1024 * 1024), '300 MB');
  t.equal(percent(null), '—');
  t.equal(percent(42.345), '42.3%');
});

t.test('the message box sends on Enter, as chat boxes do; Shift+Enter is a new line', async (t) => {
  t.ok(sendsOnEnter({ key: 'Enter', shiftKey: false }));
  t.notOk(sendsOnEnter({ key: 'Enter', shiftKey: true }), 'Shift+Enter: a new line');
  t.notOk(
    sendsOnEnter({ key: 'Enter', shiftKey: false, isComposing: true }),
    'an input method still composing keeps the key',
  );
  t.notOk(sendsOnEnter({ key: 'a', shiftKey: false }));
});
