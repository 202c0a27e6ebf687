import type { Test } from 'tap';
import type { ServiceApp } from '@agentyard/http';
import { appDb, systemDb } from '@agentyard/testing';
import { buildApp, startWorkers as startAuthWorkers } from '../src/app.ts';
import { loadAuthConfig } from '../src/config.ts';
import type { Mailer } from '../src/domain/mailer.ts';
import type { AuthWorkers } from '../src/workers.ts';

/** The auth service exactly as main.ts builds it, on this run's database, closed when `t` ends. */
export async function build(t: Test, env: Record<string, string> = {}): Promise<ServiceApp> {
  const app = await buildApp(loadAuthConfig({ ...process.env, ...env }), { db: appDb(), systemDb: systemDb() });
  t.teardown(() => app.close());
  return app;
}

/** The auth queue workers exactly as worker.ts starts them, stopped when `t` ends. */
export async function startWorkers(
  t: Test,
  env: Record<string, string> = {},
  deps: { mailer?: Mailer } = {},
): Promise<AuthWorkers> {
  const config = loadAuthConfig({ ...process.env, ...env });
  const workers = await startAuthWorkers(config, { systemDb: systemDb(), ...deps });
  await Promise.all([workers.securityEvents.waitUntilReady(), workers.email.waitUntilReady()]);
  t.teardown(() => workers.close());
  return workers;
}

/** Resolves with the result of the job `jobId` once `worker` completes it (rejects when it fails). */
export function jobDone<R>(worker: AuthWorkers['email'] | AuthWorkers['securityEvents'], jobId: string): Promise<R> {
  return new Promise((resolve, reject) => {
    const completed = (job: { id?: string }, result: unknown) => {
      if (job.id !== jobId) return;
      cleanup();
      resolve(result as R);
    };
    const failed = (job: { id?: string } | undefined, error: Error) => {
      if (job?.id !== jobId) return;
      cleanup();
      reject(error);
    };
    const cleanup = () => {
      worker.off('completed', completed as never);
      worker.off('failed', failed as never);
    };
    worker.on('completed', completed as never);
    worker.on('failed', failed as never);
  });
}
