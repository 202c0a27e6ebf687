import t from 'tap';
import { healthLevel } from '../../src/routes/health.ts';

t.test('health thresholds: 70 % healthy, 85 % degraded', async (t) => {
  t.equal(healthLevel(10, 70), 'healthy');
  t.equal(healthLevel(70.5, 10), 'degraded');
  t.equal(healthLevel(10, 85), 'degraded');
  t.equal(healthLevel(85.1, 0), 'unhealthy');
});
