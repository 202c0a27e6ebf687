import { randomBytes } from 'node:crypto';

/**
 * The bytes that writes in flight hold in one agent's workspace, so a limit is checked and used as
 * one step: a write measures the disk and reserves its bytes under the workspace's lock, streams
 * outside it, and moves its file into place and drops its reservation under the lock again. Another
 * write's check therefore sees every byte: on disk, or reserved.
 */
export interface WorkspaceLedger {
  /** Under the lock: `admit(reservedByOthers)` measures and decides the bytes to hold (0: nothing held). */
  reserve<T extends { bytes: number }>(admit: (reservedByOthers: number) => Promise<T>): Promise<T & { id: string }>;
  /** Under the lock: runs `commit` (the file moved into place), then drops the reservation, whatever `commit` did. */
  settle(id: string, commit?: () => Promise<void>): Promise<void>;
}

const locks = new Map<string, Promise<unknown>>();
const reservations = new Map<string, Map<string, number>>();

/** Runs `work` after every earlier `work` of `key` in this process has finished. */
async function inTurn<T>(key: string, work: () => Promise<T>): Promise<T> {
  const previous = locks.get(key) ?? Promise.resolve();
  const run = previous.then(work);
  const tail = run.catch(() => undefined);
  locks.set(key, tail);
  try {
    return await run;
  } finally {
    if (locks.get(key) === tail) locks.delete(key);
  }
}

/** A ledger kept in this process (the default; a service with several processes passes a shared one). */
export function inProcessLedger(key: string): WorkspaceLedger {
  const held = () => {
    let map = reservations.get(key);
    if (!map) reservations.set(key, (map = new Map()));
    return map;
  };
  return {
    reserve: (admit) =>
      inTurn(key, async () => {
        const granted = await admit([...held().values()].reduce((sum, bytes) => sum + bytes, 0));
        const id = randomBytes(8).toString('hex');
        if (granted.bytes > 0) held().set(id, granted.bytes);
        return { ...granted, id };
      }),
    settle: (id, commit) =>
      inTurn(key, async () => {
        try {
          await commit?.();
        } finally {
          held().delete(id);
          if (held().size === 0) reservations.delete(key);
        }
      }),
  };
}
