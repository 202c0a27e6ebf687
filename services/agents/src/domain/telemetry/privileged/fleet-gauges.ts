import type { SystemDb } from '@agentyard/db/system';
import { scrapedGauge } from '@agentyard/observability';
import type { RuntimeDriver } from '@agentyard/runtime';

/** Agents by status (all users: the system connection) and the warm containers waiting, read when Prometheus scrapes. */
export function observeAgents(db: SystemDb, driver: RuntimeDriver): void {
  scrapedGauge('agents_by_status', 'Agents by status', ['status'], async () => {
    const rows = await db
      .selectFrom('agents')
      .select(['status', (eb) => eb.fn.countAll<number>().as('count')])
      .groupBy('status')
      .execute();
    return rows.map((row) => [{ status: row.status }, Number(row.count)]);
  });
  if (driver.warm)
    scrapedGauge('agent_warm_pool_size', 'Warm agent containers waiting unclaimed', [], async () => [
      [{}, await driver.warm!.waiting()],
    ]);
}
