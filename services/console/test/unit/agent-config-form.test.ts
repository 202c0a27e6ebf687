import t from 'tap';
import { changeOf, commonFieldsOf } from '../../src/agent-config-form.ts';

t.test("the form's fields from a configuration, and the change they send", async (t) => {
  const config = {
    logging: { level: 'debug' },
    channels: { telegram: { enabled: true, dmPolicy: 'allowlist' } },
    session: { resetTriggers: ['/new', '/reset'] },
  };
  const fields = commonFieldsOf(config, 'openai/gpt-4o-mini');
  t.same(fields, {
    model: 'openai/gpt-4o-mini',
    logLevel: 'debug',
    telegram: true,
    discord: false,
    resetTriggers: '/new /reset',
    dmPolicy: 'allowlist',
  });
  t.same(
    commonFieldsOf({}, 'auto'),
    { model: 'auto', logLevel: 'info', telegram: false, discord: false, resetTriggers: '', dmPolicy: 'pairing' },
    "OpenClaw's defaults where the configuration says nothing",
  );
  t.same(changeOf({ ...fields, model: ' auto ', resetTriggers: '/new, /fresh  /x' }), {
    model: 'auto',
    logLevel: 'debug',
    channels: { telegram: true, discord: false },
    resetTriggers: ['/new', '/fresh', '/x'],
    dmPolicy: 'allowlist',
  });
});
