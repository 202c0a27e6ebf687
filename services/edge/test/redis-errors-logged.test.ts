import t from 'tap';
import { appDb, consoleErrors, startRelay } from '@agentyard/testing';
import { buildApp } from '../src/app.ts';
import { loadEdgeConfig } from '../src/config.ts';

// The edge's rate-limit connection when Redis goes away: a warning in the edge's log (it lets requests
// through uncounted), never ioredis' "[ioredis] Unhandled error event" on stderr, outside the log.
t.test("Redis gone: the edge's log says so and nothing else is written", async (t) => {
  // Whichever comes first ends the wait: the log line, or ioredis writing to stderr.
  let onEither = () => {};
  const written = consoleErrors(t, () => onEither());
  const relay = await startRelay(process.env.REDIS_URL!);
  const lines: { name: string; level: number; msg: string; err?: { message: string } }[] = [];
  const logStream = {
    write(line: string) {
      lines.push(JSON.parse(line));
      onEither();
    },
  };
  const edge = await buildApp(loadEdgeConfig({ ...process.env, REDIS_URL: relay.url, LOG_LEVEL: 'info' }), {
    db: appDb(),
    health: { current: () => 'healthy' },
    logStream,
  });
  t.teardown(() => edge.close());

  await relay.goDown();
  const warned = () => lines.find((line) => line.msg === 'rate-limit connection error');
  if (!warned() && written.length === 0)
    await new Promise<void>((resolve) => (onEither = () => void ((warned() || written.length > 0) && resolve())));
  t.match(
    warned(),
    { name: /^edge$/, level: 40, err: { message: /ECONN(REFUSED|RESET)|closed/ } },
    'a warning in the log, naming the connection',
  );
  t.same(written, [], 'nothing written to stderr by ioredis');
});
