import t from 'tap';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '@agentyard/config';

// Every service has the one shape (docs/conventions.md): app.ts exports buildApp and serverOptions
// (and startWorkers where a worker process exists), main.ts and worker.ts only call them, the test
// helper builds the app with them, one error catalogue, and routes throw from it.
const services = readdirSync(join(repoRoot, 'services')).filter((name) =>
  existsSync(join(repoRoot, 'services', name, 'src', 'main.ts')),
);

function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

const codeLines = (path: string) =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.trim() && !line.trim().startsWith('//'));

t.ok(services.length >= 7, `every service is walked (${services.join(', ')})`);

for (const name of services) {
  t.test(name, async (t) => {
    const src = join(repoRoot, 'services', name, 'src');
    const app = (await import(join(src, 'app.ts'))) as Record<string, unknown>;
    t.type(app.buildApp, 'function', 'app.ts exports buildApp');
    t.type(app.serverOptions, 'function', 'app.ts exports serverOptions');
    const hasWorker = existsSync(join(src, 'worker.ts'));
    if (hasWorker) t.type(app.startWorkers, 'function', 'app.ts exports startWorkers (it has a worker process)');

    const configModule = (await import(join(src, 'config.ts'))) as Record<string, unknown>;
    const load = Object.entries(configModule).find(
      ([key, value]) => /^load\w*Config$/.test(key) && typeof value === 'function',
    )?.[1] as
      | ((env: Record<string, string | undefined>) => { BODY_LIMIT_BYTES: number; LOG_LEVEL: string })
      | undefined;
    t.ok(load, 'config.ts exports its loader');
    if (load) {
      const config = load({ ...process.env, BODY_LIMIT_BYTES: '123456' });
      const options = (
        app.serverOptions as (c: unknown) => { bodyLimit?: number; trustProxy?: unknown; logLevel?: string }
      )(config);
      t.equal(options.bodyLimit, 123456, 'serverOptions carries the configured body limit');
      t.not(options.trustProxy, undefined, 'serverOptions says whose X-Forwarded-For is believed');
      t.equal(options.logLevel, config.LOG_LEVEL, 'serverOptions carries the log level');
    }

    const main = codeLines(join(src, 'main.ts'));
    t.ok(main.length <= 10, `main.ts is a few lines (${main.length})`);
    t.match(main.join('\n'), /buildApp\(/, 'main.ts builds the app with buildApp');
    if (hasWorker) {
      const worker = codeLines(join(src, 'worker.ts'));
      t.ok(worker.length <= 10, `worker.ts is a few lines (${worker.length})`);
      t.match(worker.join('\n'), /startWorkers\(/, 'worker.ts starts the workers with startWorkers');
    }
    const helper = join(repoRoot, 'services', name, 'test', 'helper.ts');
    if (existsSync(helper))
      t.match(readFileSync(helper, 'utf8'), /buildApp\(/, 'the test helper builds the app with buildApp');

    t.ok(existsSync(join(src, 'errors.ts')), 'src/errors.ts is the error catalogue');
    for (const file of filesUnder(join(src, 'routes'))) {
      t.notMatch(
        readFileSync(file, 'utf8'),
        /new HttpError\(/,
        `${file.slice(repoRoot.length)} throws from the catalogue`,
      );
    }
    for (const file of filesUnder(src).filter((f) => f !== join(src, 'errors.ts'))) {
      t.notMatch(
        readFileSync(file, 'utf8'),
        /export const \w+Errors = \{/,
        `${file.slice(repoRoot.length)} keeps no error catalogue of its own`,
      );
    }
  });
}
