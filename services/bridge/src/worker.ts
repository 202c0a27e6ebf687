import { runWorkerProcess } from '@agentyard/http';
import { createSystemDb } from '@agentyard/db/system';
import { loadBridgeConfig } from './config.ts';
import { startBusDeliveryWorker } from './bus-delivery-worker.ts';

const config = loadBridgeConfig();
await runWorkerProcess('bridge-worker', config.LOG_LEVEL, (log) => {
  const db = createSystemDb(config.DATABASE_SYSTEM_URL, { max: 4 });
  const delivery = startBusDeliveryWorker(config, db, log);
  return { close: async () => { await delivery.close(); await db.destroy(); } };
});
