import t from 'tap';
import pino from 'pino';
import { createServer } from '../../src/index.ts';
import { loggerOptions, withoutSecrets } from '../../src/log.ts';

/** A logger of the platform writing into memory; `lines` are the written lines, parsed. */
function memoryLogger() {
  const written: string[] = [];
  const log = pino(loggerOptions('redaction-test', 'trace'), {
    write: (line: string) => {
      written.push(line);
    },
  });
  return { log, written, lines: () => written.map((line) => JSON.parse(line) as Record<string, unknown>) };
}

t.test(
  'secret-named keys are censored at any depth and in any case; other fields are kept; the logged object is not changed',
  async (t) => {
    const { log, written, lines } = memoryLogger();
    const logged = {
      user: { name: 'Ada', password: 'pw-top-secret-1' },
      headers: {
        Authorization: 'Bearer sk_secret_2',
        'content-type': 'application/json',
        'X-Agentyard-Identity': 'signed-3',
      },
      calls: [{ apiKey: 'key-secret-4', model: 'openai/gpt-4o-mini' }],
      deep: { a: { b: { c: { secret: 'deep-secret-5' } } } },
    };
    const before = structuredClone(logged);
    log.info(logged, 'a line');
    const [line] = lines();
    t.match(line, {
      msg: 'a line',
      name: /^redaction-test$/,
      user: { name: /^Ada$/, password: /^\[redacted\]$/ },
      headers: {
        Authorization: /^\[redacted\]$/,
        'content-type': /^application\/json$/,
        'X-Agentyard-Identity': /^\[redacted\]$/,
      },
      calls: [{ apiKey: /^\[redacted\]$/, model: /^openai\/gpt-4o-mini$/ }],
      deep: { a: { b: { c: { secret: /^\[redacted\]$/ } } } },
    });
    for (const secret of ['pw-top-secret-1', 'sk_secret_2', 'signed-3', 'key-secret-4', 'deep-secret-5'])
      t.notOk(written[0]!.includes(secret), `${secret} is not written`);
    t.same(logged, before, "the caller's object keeps its values");
  },
);

t.test('an object without secrets is passed on as it is (no copy); cycles and depth end in the censor', async (t) => {
  const plain = { a: 1, b: { c: [1, 2, { d: 'x' }] } };
  t.equal(withoutSecrets(plain), plain);
  const cyclic: Record<string, unknown> = { name: 'loop' };
  cyclic.self = cyclic;
  const kept = withoutSecrets(cyclic) as Record<string, unknown>;
  let depth = 0;
  for (let at: unknown = kept; typeof at === 'object' && at !== null; at = (at as Record<string, unknown>).self)
    depth++;
  t.equal(depth, 8, 'a cycle is cut at the depth limit');
  t.not(kept, cyclic);
});

t.test(
  "an error's own fields are scrubbed after its serializer, and a child logger's lines like its parent's",
  async (t) => {
    const { log, written, lines } = memoryLogger();
    const error = Object.assign(new Error('upstream refused'), { token: 'error-token-6', status: 502 });
    log.error({ err: error }, 'failed');
    log.child({ requestId: 'r-1' }).warn({ body: { token: 'child-token-7' } }, 'child line');
    const [failed, child] = lines();
    t.match(failed, { err: { message: 'upstream refused', token: /^\[redacted\]$/, status: 502, type: /^Error$/ } });
    t.match(child, { requestId: /^r-1$/, body: { token: /^\[redacted\]$/ }, msg: 'child line' });
    t.notOk(written.join('').includes('error-token-6'));
    t.notOk(written.join('').includes('child-token-7'));
  },
);

t.test('a service logs requests with their ids but without credentials', async (t) => {
  const written: string[] = [];
  const app = createServer({
    name: 'redaction-service',
    logLevel: 'trace',
    logStream: {
      write: (line) => {
        written.push(line);
      },
    },
  });
  app.post('/echo', async (request) => {
    request.log.info({ headers: request.headers, body: request.body }, 'received');
    return { ok: true };
  });
  const res = await app.inject({
    method: 'POST',
    url: '/echo?code=oauth-code-8',
    headers: {
      authorization: 'Bearer sk_header_9',
      cookie: 'agentyard-session=cookie-10',
      'x-request-id': 'request-0001',
    },
    payload: { email: 'a@example.test', password: 'body-password-11', newPassword: 'body-password-12' },
  });
  t.equal(res.statusCode, 200);
  await app.close();
  const lines = written.map((line) => JSON.parse(line) as Record<string, unknown>);
  t.ok(
    lines.some((line) => line.msg === 'incoming request' && line.reqId === 'request-0001'),
    'the request line carries its id',
  );
  t.has(
    lines.find((line) => line.msg === 'received'),
    {
      reqId: 'request-0001',
      headers: { authorization: '[redacted]', cookie: '[redacted]' },
      body: { email: 'a@example.test', password: '[redacted]' },
    },
  );
  for (const secret of ['oauth-code-8', 'sk_header_9', 'cookie-10', 'body-password-11', 'body-password-12'])
    t.notOk(written.join('').includes(secret), `${secret} is not written`);
});
