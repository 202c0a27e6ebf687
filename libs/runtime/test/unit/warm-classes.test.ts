import t from 'tap';
import { resourcesFor, warmClasses } from '../../src/index.ts';

t.test('RUNTIME_WARM_POOL: plans with the same resources share their warm containers', async (t) => {
  t.same(warmClasses('', 'img'), []);
  t.same(warmClasses('solo=2, free=1,label=4', 'img'), [
    { image: 'img', resources: resourcesFor('solo'), count: 3 },
    { image: 'img', resources: resourcesFor('label'), count: 4 },
  ]);
  t.same(
    warmClasses('scale=1', 'img'),
    [{ image: 'img', resources: resourcesFor('label'), count: 1 }],
    'a legacy alias names the same class as its plan',
  );
  t.throws(() => warmClasses('gold=2', 'img'), /RUNTIME_WARM_POOL: bad entry gold=2/);
  t.throws(() => warmClasses('solo=two', 'img'), /bad entry/);
});
