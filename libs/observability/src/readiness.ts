/**
 * What this process needs to serve: each shared resource (a database pool, a Redis connection, the
 * container engine) names itself here when it is made and withdraws when it is closed, so readiness
 * asks exactly what this process uses, whatever wires it.
 */
export type DependencyName = 'postgres' | 'redis' | 'container-engine';
export type DependencyCheck = (signal: AbortSignal) => Promise<unknown>;

const checks = new Map<DependencyName, Set<DependencyCheck>>();

/** Registers one resource's check (e.g. `select 1` on a pool); returns its withdrawal, for its close. */
export function registerDependency(name: DependencyName, check: DependencyCheck): () => void {
  const set = checks.get(name) ?? new Set();
  set.add(check);
  checks.set(name, set);
  return () => {
    set.delete(check);
    if (set.size === 0) checks.delete(name);
  };
}

export type DependencyStates = Partial<Record<DependencyName, 'ok' | string>>;

/** How long a dependency may take to answer before it counts as down. */
export const DEFAULT_CHECK_TIMEOUT_MS = 2000;

/**
 * Every registered dependency's state: `ok`, or why not (`timed out after 2000 ms`, the error's
 * message). A dependency with several resources (two pools) is ok when all of them answer. `only`:
 * those named, when registered.
 */
export async function dependencyStates(
  timeoutMs = DEFAULT_CHECK_TIMEOUT_MS,
  only?: readonly DependencyName[],
): Promise<DependencyStates> {
  const entries = await Promise.all(
    [...checks]
      .filter(([name]) => !only || only.includes(name))
      .map(async ([name, set]) => {
        const failures = (await Promise.all([...set].map((check) => answerWithin(check, timeoutMs)))).filter(
          (f) => f !== null,
        );
        return [name, failures[0] ?? 'ok'] as const;
      }),
  );
  return Object.fromEntries(entries);
}

async function answerWithin(check: DependencyCheck, timeoutMs: number): Promise<string | null> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<string>((resolve) => {
    timer = setTimeout(() => {
      controller.abort();
      resolve(`timed out after ${timeoutMs} ms`);
    }, timeoutMs);
  });
  try {
    return await Promise.race([
      check(controller.signal).then(
        () => null,
        (error: Error) => error?.message || 'failed',
      ),
      timedOut,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** The part of an ioredis client a readiness check uses. */
interface RedisClient {
  status: string;
  ping(): Promise<unknown>;
  once(event: 'ready', listener: () => void): unknown;
  off(event: 'ready', listener: () => void): unknown;
}

/**
 * A Redis connection's check: PING, after waiting (within the check's time) for a connection still
 * being made, since clients without an offline queue refuse commands until then (a fresh process).
 */
export async function pingRedis(redis: RedisClient, signal: AbortSignal): Promise<unknown> {
  if (['connecting', 'connect', 'reconnecting'].includes(redis.status)) {
    await new Promise<void>((resolve, reject) => {
      const ready = () => {
        signal.removeEventListener('abort', aborted);
        resolve();
      };
      const aborted = () => {
        redis.off('ready', ready);
        reject(new Error('not connected yet'));
      };
      redis.once('ready', ready);
      signal.addEventListener('abort', aborted, { once: true });
    });
  }
  return redis.ping();
}
