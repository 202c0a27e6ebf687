// Applies pending migrations to the development database (npm start does this too).
import { setTimeout as delay } from 'node:timers/promises';
import { databaseExists } from '@agentyard/db/admin';
import { ADMIN_URL, ensureDataServices, prepareDatabase } from './lib/platform.ts';

// With an explicit admin URL the database is elsewhere (docker-compose); locally, start it.
if (process.env.DATABASE_ADMIN_URL) await serverAnswering(Number(process.env.DATABASE_WAIT_SECONDS ?? 120) * 1000);
else ensureDataServices();
await prepareDatabase(process.env.DATABASE_NAME ?? 'agentyard');
console.log('migrations applied');

/** Waits for a server that is still starting (an orchestrator that does not wait for its health, e.g. podman-compose). */
async function serverAnswering(deadlineMs: number): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    try {
      await databaseExists(ADMIN_URL, 'postgres');
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      console.log(`waiting for PostgreSQL (${(error as Error).message.split('\n')[0]})`);
      await delay(1000);
    }
  }
}
