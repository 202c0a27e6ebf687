import t from 'tap';
import {
  afterFor,
  agentMayHibernate,
  channelsKeepingAwake,
  HIBERNATION_SETTING_PATTERN,
  hibernationStep,
  parseHibernationPlans,
  pausesOf,
  type HibernationSettings,
} from '../../src/domain/runtime/hibernation-policy.ts';

const MIN = 60_000;
const HOUR = 60 * MIN;

t.test('hibernation settings: one duration, off, or per plan with a fallback', async (t) => {
  const every = parseHibernationPlans('15m');
  t.equal(afterFor(every, 'solo'), 15 * MIN);
  t.equal(afterFor(every, 'network'), 15 * MIN);
  const plans = parseHibernationPlans('solo=10m,network=off,*=2h');
  t.equal(afterFor(plans, 'solo'), 10 * MIN);
  t.equal(afterFor(plans, 'network'), null, 'off: never');
  t.equal(afterFor(plans, 'label'), 2 * HOUR, 'the others: the fallback');
  t.equal(afterFor(parseHibernationPlans('solo=500ms'), 'label'), null, 'no fallback: the others never hibernate');
  t.equal(afterFor(parseHibernationPlans('off'), 'solo'), null);
  t.throws(() => parseHibernationPlans('solo=ten'), /not a hibernation setting/);
  const pattern = new RegExp(HIBERNATION_SETTING_PATTERN);
  for (const good of ['15m', 'off', '500ms', 'solo=10m,network=off,*=15m', '*=1d'])
    t.match(good, pattern, `${good} is accepted by the config`);
  for (const bad of ['', '15', 'solo=', 'solo=10m,', 'Solo=10m', '10 m'])
    t.notMatch(bad, pattern, `${JSON.stringify(bad)} is refused by the config`);
});

t.test('channels that need a live connection keep an agent awake', async (t) => {
  t.same(channelsKeepingAwake({}), []);
  t.same(
    channelsKeepingAwake({ channels: { telegram: { enabled: false }, discord: { enabled: false } } }),
    [],
    'switched off: may hibernate',
  );
  t.same(channelsKeepingAwake({ channels: { telegram: { enabled: true } } }), ['telegram']);
  t.same(
    channelsKeepingAwake({ channels: { discord: { token: 'x' }, webchat: { enabled: true } } }),
    ['discord'],
    'a credential without enabled:false is on; web chat comes through the platform',
  );
  t.same(
    channelsKeepingAwake({ channels: { telegram: { botToken: 'x', enabled: false } } }),
    [],
    'a credential switched off',
  );
  t.same(channelsKeepingAwake({ channels: 'nonsense' }), []);
  t.equal(agentMayHibernate({ config: { channels: { whatsapp: { enabled: true } } } }), false);
  t.equal(agentMayHibernate({ config: {} }), true);
  // A channel bound in the vault runs whatever the config document says of it.
  t.equal(
    agentMayHibernate({ config: { channels: { telegram: { enabled: false } } }, boundChannels: ['telegram'] }),
    false,
    'a bound Telegram bot keeps its agent awake',
  );
  t.equal(agentMayHibernate({ config: {}, boundChannels: [] }), true);
});

t.test('what the sweep does to an agent', async (t) => {
  const settings: HibernationSettings = {
    pauseAfter: parseHibernationPlans('15m'),
    stopAfter: parseHibernationPlans('6h,network=off'),
    wakeLeadMs: () => 2 * MIN,
  };
  const agent = (over: Partial<Parameters<typeof hibernationStep>[0]> = {}) => ({
    id: 'a',
    status: 'running' as const,
    hibernation: null,
    plan: 'solo',
    config: {},
    ...over,
  });
  t.equal(hibernationStep(agent(), 14 * MIN, null, settings), null, 'active recently: nothing');
  t.equal(hibernationStep(agent(), 15 * MIN, null, settings), 'pause', 'idle long enough: paused');
  t.equal(hibernationStep(agent({ status: 'active' }), 16 * MIN, null, settings), 'pause');
  t.equal(
    hibernationStep(agent({ config: { channels: { telegram: { enabled: true } } } }), 10 * HOUR, null, settings),
    null,
    'a Telegram agent is never paused',
  );
  t.equal(
    hibernationStep(agent({ status: 'stopped' }), 10 * HOUR, null, settings),
    null,
    'stopped by its owner: not ours',
  );
  const paused = agent({ status: 'suspended', hibernation: 'paused' });
  t.equal(hibernationStep(paused, 5 * HOUR, null, settings), null, 'paused, not yet idle long enough to stop');
  t.equal(hibernationStep(paused, 6 * HOUR, null, settings), 'stop', 'paused long enough: stopped');
  t.equal(
    hibernationStep(paused, 6 * HOUR, MIN, settings),
    null,
    'a prompt due before it could boot again: kept paused',
  );
  t.equal(hibernationStep({ ...paused, plan: 'network' }, 100 * HOUR, null, settings), null, 'a plan that never stops');
  const stopped = agent({ status: 'suspended', hibernation: 'stopped' });
  t.equal(hibernationStep(stopped, 10 * HOUR, 10 * MIN, settings), null, 'stopped, next prompt far off: left asleep');
  t.equal(
    hibernationStep(stopped, 10 * HOUR, 2 * MIN, settings),
    'wake',
    'its next prompt within its wake lead: started ahead',
  );
  t.equal(hibernationStep(stopped, 10 * HOUR, -5000, settings), 'wake', 'one overdue too');
  const stopOnly: HibernationSettings = { ...settings, pauseAfter: parseHibernationPlans('off') };
  t.equal(hibernationStep(agent(), 6 * HOUR, null, stopOnly), 'stop', 'a plan that stops without pausing');
  t.equal(hibernationStep(agent(), 6 * HOUR, MIN, stopOnly), null, '… unless a prompt is due soon');

  const recycling: HibernationSettings = {
    ...settings,
    recycleAfter: parseHibernationPlans('30m'),
    recycleMemoryShare: 0.8,
  };
  const telegram = agent({ config: { channels: { telegram: { enabled: true } } } });
  const heavy = { share: 0.85, upForMs: HOUR };
  t.equal(
    hibernationStep(telegram, 31 * MIN, null, recycling, heavy),
    'recycle',
    'awake (a channel), idle and over its memory share: recycled',
  );
  t.equal(hibernationStep(telegram, 29 * MIN, null, recycling, heavy), null, 'not idle long enough');
  t.equal(
    hibernationStep(telegram, 31 * MIN, null, recycling, { share: 0.5, upForMs: HOUR }),
    null,
    'under its memory share',
  );
  t.equal(
    hibernationStep(telegram, 31 * MIN, null, recycling, { share: 0.9, upForMs: 10 * MIN }),
    null,
    'restarted lately: left alone',
  );
  t.equal(
    hibernationStep(telegram, 31 * MIN, null, recycling, { share: null, upForMs: HOUR }),
    null,
    'no recent sample: left alone',
  );
  t.equal(hibernationStep(telegram, 31 * MIN, MIN, recycling, heavy), null, 'a prompt due soon: left alone');
  t.equal(
    hibernationStep(agent(), 31 * MIN, null, recycling, heavy),
    'pause',
    'one that may hibernate is paused instead',
  );
  t.equal(hibernationStep(telegram, 31 * MIN, null, settings, heavy), null, 'no recycling configured');
});

t.test('a driver without a freezer (kubernetes): no pause, the idle agent runs until it is stopped', async (t) => {
  const settings: HibernationSettings = {
    pauseAfter: pausesOf(parseHibernationPlans('15m'), false),
    stopAfter: parseHibernationPlans('6h'),
    wakeLeadMs: () => 2 * MIN,
  };
  const agent = { id: 'a', status: 'running' as const, hibernation: null, plan: 'solo', config: {} };
  t.equal(
    hibernationStep(agent, 1 * HOUR, null, settings),
    null,
    'idle past the pause time: left running (a pause that cannot be done would hold the stop back)',
  );
  t.equal(hibernationStep(agent, 6 * HOUR, null, settings), 'stop', 'idle past the stop time: stopped');
  t.equal(pausesOf(parseHibernationPlans('15m'), true).fallback, 15 * MIN, 'a driver that pauses keeps the setting');
});
