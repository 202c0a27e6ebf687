// The bench's stand-in for the agents' hooks (libs/testing's, shared with the fault suite), in a
// process of its own (so its work is not counted against the bench driver's timers): answers the
// parent's 'report' message with each task's deliveries per due minute and the lag behind it.
import { startHooksStandIn } from '@agentyard/testing/hooks-stand-in';

const MINUTE = 60_000;
const standIn = await startHooksStandIn({ token: process.env.BENCH_HOOKS_TOKEN! });
const port = Number(new URL(standIn.url).port);
process.send!({ type: 'listening', port });
process.on('message', (message: { type: string }) => {
  if (message.type === 'report') {
    const deliveries = new Map<string, number>(); // `${taskId}@${dueMinute}` -> count
    const lags: [due: number, lag: number][] = [];
    for (const { taskId, at } of standIn.deliveries) {
      const due = Math.floor(at / MINUTE) * MINUTE; // every task fires on the minute; lag stays well under one
      const key = `${taskId}@${due}`;
      deliveries.set(key, (deliveries.get(key) ?? 0) + 1);
      lags.push([due, at - due]);
    }
    process.send!({ type: 'report', deliveries: [...deliveries], lags, unauthorized: standIn.unauthorized });
  }
  if (message.type === 'close') void standIn.close().then(() => process.exit(0));
});
