import t from 'tap';
import { createUserRow, identityHeaders, systemDb } from '@agentyard/testing';
import { build } from './helper.ts';

const app = await build(t);

async function user(plan = 'solo') {
  const row = await createUserRow({ plan });
  const headers = identityHeaders({ userId: row.id, email: row.email });
  const call = (method: 'GET' | 'POST' | 'PUT', payload?: unknown) =>
    app.inject({
      method,
      url: '/api/config',
      headers,
      ...(payload === undefined
        ? {}
        : typeof payload === 'string'
          ? { payload, headers: { ...headers, 'content-type': 'application/json' } }
          : { payload: payload as object }),
    });
  return { id: row.id, call };
}

t.test("without a saved configuration the plan's defaults are answered", async (t) => {
  const solo = await user('solo');
  const res = await solo.call('GET');
  t.equal(res.statusCode, 200);
  t.has(res.json(), {
    config: {
      tools: { profile: 'messaging' },
      gateway: { bind: 'lan', auth: { mode: 'token' } },
      channels: { whatsapp: { allowFrom: [] } },
      session: { dmScope: 'per-channel-peer' },
    },
    backups: [],
  });
  const collective = await user('collective');
  t.equal((await collective.call('GET')).json().config.tools.profile, 'coding');
  t.equal((await app.inject({ method: 'GET', url: '/api/config', headers: identityHeaders() })).statusCode, 401);
});

t.test('a save backs up the previous configuration and keeps only the last 10', async (t) => {
  const u = await user();
  const first = await u.call('POST', { config: { logging: { level: 'debug' } } });
  t.equal(first.statusCode, 200);
  const body = first.json();
  t.match(body, { success: true, config: { logging: { level: /^debug$/ } }, backupId: /^bkp_/ });
  t.equal(body.backups.length, 1);
  t.equal(body.backups[0].id, body.backupId);
  t.match(body.backups[0].timestamp, /^\d{4}-\d\d-\d\dT/);

  for (let i = 0; i < 12; i++) await u.call('POST', { config: { logging: { level: i % 2 ? 'info' : 'warn' } } });
  const view = (await u.call('GET')).json();
  t.equal(view.backups.length, 10);
  t.same(view.config, { logging: { level: 'info' } });
  const rows = await systemDb().selectFrom('config_backups').select('id').where('user_id', '=', u.id).execute();
  t.equal(rows.length, 10, 'older backups are deleted, not just hidden');
});

t.test('concurrent saves never lose a backup or keep an eleventh', async (t) => {
  const u = await user();
  const answers = await Promise.all(
    Array.from({ length: 8 }, (_, i) =>
      u.call('POST', { config: { agents: { defaults: { timeoutSeconds: i + 1 } } } }),
    ),
  );
  t.ok(answers.every((a) => a.statusCode === 200));
  const ids = new Set(answers.map((a) => a.json().backupId));
  t.equal(ids.size, 8, 'each save made its own backup');
  const rows = await systemDb().selectFrom('config_backups').select('config').where('user_id', '=', u.id).execute();
  t.equal(rows.length, 8);
  // The backups are the defaults plus seven of the saved configs: each save backed up the one before it.
  const saved = await systemDb()
    .selectFrom('agent_configs')
    .select('config')
    .where('user_id', '=', u.id)
    .executeTakeFirstOrThrow();
  const seen = new Set(rows.map((r) => JSON.stringify(r.config)).concat(JSON.stringify(saved.config)));
  t.equal(seen.size, 9, 'no configuration was overwritten without a backup');

  await Promise.all(
    Array.from({ length: 6 }, (_, i) =>
      u.call('POST', { config: { agents: { defaults: { timeoutSeconds: 100 + i } } } }),
    ),
  );
  t.equal(
    (await systemDb().selectFrom('config_backups').select('id').where('user_id', '=', u.id).execute()).length,
    10,
  );
});

t.test('restore backs up the current configuration and brings the backup back', async (t) => {
  const u = await user();
  const a = (await u.call('POST', { config: { logging: { level: 'warn' } } })).json();
  await u.call('POST', { config: { logging: { level: 'error' } } });
  const list = (await u.call('GET')).json().backups;
  const warnBackup = list[0].id; // taken when `error` replaced `warn`
  const res = await u.call('PUT', { backupId: warnBackup });
  t.equal(res.statusCode, 200);
  t.has(res.json(), { success: true, config: { logging: { level: 'warn' } }, restoredFrom: warnBackup });
  t.equal(res.json().backups.length, 3);
  t.same((await u.call('GET')).json().config, { logging: { level: 'warn' } });
  const restoredAgain = await u.call('PUT', { backupId: res.json().backups[0].id });
  t.same(
    restoredAgain.json().config,
    { logging: { level: 'error' } },
    'the configuration replaced by a restore was backed up',
  );
  t.ok(a.backupId);

  t.match((await u.call('PUT', { backupId: 'bkp_missing' })).json(), { error: 'Backup not found' });
  t.equal((await u.call('PUT', { backupId: 'bkp_missing' })).statusCode, 404);
  const other = await user();
  t.equal((await other.call('PUT', { backupId: warnBackup })).statusCode, 404, "another user's backup is not found");
});

t.test('the 400 messages of the interface, and nothing changes', async (t) => {
  const u = await user();
  const cases: [string, 'POST' | 'PUT', unknown, string][] = [
    ['config missing', 'POST', {}, 'Invalid config object'],
    ['config an array', 'POST', { config: [1] }, 'Invalid config object'],
    ['config a number', 'POST', { config: 5 }, 'Invalid config object'],
    ['config an unparseable string', 'POST', { config: '{"logging":' }, 'Config is not valid JSON'],
    ['an extra field', 'POST', { config: {}, other: 1 }, 'Invalid request body'],
    ['malformed JSON', 'POST', '{"config": ', 'Invalid request body'],
    ['backupId missing', 'PUT', {}, 'Missing backupId'],
    ['malformed JSON on restore', 'PUT', '{"backupId"', 'Invalid request body'],
    [
      'an unknown OpenClaw key',
      'POST',
      { config: { gateway: { bind: 'lan', colour: 'red' } } },
      'Invalid config: unknown key gateway.colour',
    ],
    ['an unknown section', 'POST', { config: { plugins: {} } }, 'Invalid config: unknown key plugins'],
    [
      'a value OpenClaw refuses',
      'POST',
      { config: { tools: { profile: 'everything' } } },
      'Invalid config: tools.profile is not a value OpenClaw accepts',
    ],
    [
      'a platform-managed key',
      'POST',
      { config: { hooks: { enabled: true } } },
      'Invalid config: hooks is set by the platform',
    ],
  ];
  for (const [name, method, payload, error] of cases) {
    const res = await u.call(method, payload);
    t.equal(res.statusCode, 400, name);
    t.same(res.json(), { error }, name);
  }
  const view = (await u.call('GET')).json();
  t.same(view.backups, [], 'no backup was made by a refused save');
  t.equal(
    (await systemDb().selectFrom('agent_configs').select('user_id').where('user_id', '=', u.id).execute()).length,
    0,
  );
  const encoded = await u.call('POST', { config: JSON.stringify({ logging: { level: 'debug' } }) });
  t.same(encoded.json().config, { logging: { level: 'debug' } }, 'a JSON-encoded config is accepted');
});
