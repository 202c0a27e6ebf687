import t from 'tap';
import { errorFrom, query } from '../../src/api.ts';
import { configText, parseConfigText } from '../../src/config-text.ts';
import { actionsFor, applyToDetail, applyToList, parseAgentEvent } from '../../src/events.ts';
import { count, dayLabel, loginErrorWords, ofLimit, provisionStep, statusWords, usd, when } from '../../src/format.ts';
import { siweMessage } from '../../src/siwe.ts';
import type { AgentDetail, AgentList } from '../../src/types.ts';

t.test('money: cents from a dollar up, enough digits below it that small AI costs show', async (t) => {
  t.equal(usd(0), '$0.00');
  t.equal(usd(12.5), '$12.50');
  t.equal(usd(1234.567), '$1,234.57');
  t.equal(usd(0.0421), '$0.0421');
  t.equal(usd(0.000123), '$0.000123');
  t.equal(usd(-5), '-$5.00');
  t.equal(count(1234567), '1,234,567');
});

t.test('limits, dates and days', async (t) => {
  t.same(ofLimit(3, 5), { text: '3 of 5', share: 0.6 });
  t.same(ofLimit(7, 5), { text: '7 of 5', share: 1 }, 'over the limit fills the meter, no more');
  t.same(ofLimit(0, 0), { text: '0 of 0', share: 0 });
  t.equal(when(null), '—');
  t.equal(when('not a date'), '—');
  t.not(when('2026-11-25T10:00:00Z'), '—');
  t.equal(dayLabel('2026-11-25'), 'Nov 25');
  t.equal(dayLabel('garbage'), 'garbage');
});

t.test('agent statuses in words, and how far provisioning has come', async (t) => {
  t.has(statusWords('running'), { label: 'Running', settled: true, tone: 'ok' });
  t.has(statusWords('provisioning'), { label: 'Provisioning', settled: false });
  t.has(statusWords('error'), { label: 'Failed', tone: 'bad' });
  t.has(statusWords('something-new'), { label: 'something-new', settled: true }, 'an unknown status is shown as it is');
  t.match(
    statusWords('suspended', 'paused'),
    { label: 'Asleep (paused)', settled: true, tone: /^off$/, hint: /wakes it at once/ },
    'a paused agent says a request wakes it',
  );
  t.match(
    statusWords('suspended', 'stopped'),
    { label: 'Asleep (stopped)', hint: /boots first/ },
    'a stopped one says it boots first',
  );
  t.has(statusWords('running', 'paused'), { label: 'Running' }, 'the depth counts only while suspended');
  t.same(
    ['pending', 'provisioning', 'deploying', 'running', 'active', 'error', 'stopped'].map(provisionStep),
    [0, 1, 2, 3, 3, -1, -1],
  );
});

t.test('/login?error= codes the auth service sends, in words', async (t) => {
  t.equal(loginErrorWords(null), undefined);
  t.equal(loginErrorWords('GoogleNotConfigured'), 'Google sign-in is not set up on this server.');
  t.match(loginErrorWords('InviteRequired'), /needs an invite/);
  t.match(loginErrorWords('AccessDenied'), /cancelled/);
  t.equal(loginErrorWords('SomethingElse'), 'Signing in failed (SomethingElse). Try again.');
  t.equal(loginErrorWords('x'.repeat(500))!.length < 150, true, 'a long code is cut');
});

t.test("API errors carry the API's own message and code", async (t) => {
  t.match(errorFrom(403, { error: 'Subscription required', code: 'SUBSCRIPTION_REQUIRED' }), {
    status: 403,
    message: 'Subscription required',
    code: /^SUBSCRIPTION_REQUIRED$/,
  });
  t.match(errorFrom(502, undefined), {
    status: 502,
    message: 'The server answered 502: try again in a moment',
    code: undefined,
  });
  t.match(errorFrom(404, { error: '' }), { message: 'The server answered 404' });
  t.equal(query({ agentId: 'a b', days: 7, cursor: undefined, empty: '' }), '?agentId=a+b&days=7');
  t.equal(query({}), '');
});

t.test('the configuration editor checks JSON in place, with the line and column', async (t) => {
  t.same(parseConfigText('{"a": 1}'), { ok: true, value: { a: 1 } });
  const broken = parseConfigText('{\n  "a": 1,\n}');
  t.equal(broken.ok, false);
  if (!broken.ok) t.match(broken.message, /^Not valid JSON at line 3, column 1/);
  t.same(parseConfigText('[1]'), { ok: false, message: 'The configuration must be a JSON object ({ … })' });
  t.same(parseConfigText('null'), { ok: false, message: 'The configuration must be a JSON object ({ … })' });
  t.equal(configText({ a: { b: 1 } }), '{\n  "a": {\n    "b": 1\n  }\n}\n');
});

t.test('live status events update the cached agents, nothing else', async (t) => {
  t.same(
    parseAgentEvent('{"agentId":"a1","status":"running","previousStatus":"deploying","at":"2026-11-25T10:00:00Z"}'),
    {
      agentId: 'a1',
      status: 'running',
      previousStatus: 'deploying',
      at: '2026-11-25T10:00:00Z',
    },
  );
  t.equal(parseAgentEvent('{"agentId":"a1","status":"running"}'), undefined, 'no time: not an event');
  t.equal(parseAgentEvent('{"type":"ping"}'), undefined);
  t.equal(parseAgentEvent('not json'), undefined);
  t.equal(parseAgentEvent('null'), undefined);
  t.equal(parseAgentEvent('{"agentId":7,"status":"running","at":"2026-11-25T10:00:00Z"}'), undefined);
  const agent = (id: string, status: string) => ({
    id,
    name: id,
    model: 'm',
    status,
    websocketUrl: null,
    createdAt: '',
    updatedAt: '',
  });
  const list = { agents: [agent('a1', 'provisioning'), agent('a2', 'running')], count: 2, status: 'ok' } as AgentList;
  const next = applyToList(list, {
    previousStatus: null,
    at: '2026-11-25T10:00:00Z',
    agentId: 'a1',
    status: 'running',
  });
  t.same(
    next?.agents.map((a) => a.status),
    ['running', 'running'],
  );
  t.equal(list.agents[0]!.status, 'provisioning', 'the cached list is not changed in place');
  t.equal(
    applyToList(list, { previousStatus: null, at: '2026-11-25T10:00:00Z', agentId: 'a2', status: 'running' }),
    list,
    'no change: the same object',
  );
  t.equal(
    applyToList(list, { previousStatus: null, at: '2026-11-25T10:00:00Z', agentId: 'other', status: 'error' }),
    list,
    "another user's or unknown agent: nothing",
  );
  t.equal(
    applyToList(undefined, { previousStatus: null, at: '2026-11-25T10:00:00Z', agentId: 'a1', status: 'running' }),
    undefined,
  );
  const detail = { agent: { ...agent('a1', 'provisioning') } as unknown as AgentDetail, status: 'ok' as const };
  t.equal(
    applyToDetail(detail, { previousStatus: null, at: '2026-11-25T10:00:00Z', agentId: 'a1', status: 'error' })?.agent
      .status,
    'error',
  );
  t.equal(
    applyToDetail(detail, { previousStatus: null, at: '2026-11-25T10:00:00Z', agentId: 'a2', status: 'error' }),
    detail,
  );
  const asleep = applyToList(list, {
    previousStatus: 'running',
    at: '2026-11-25T10:00:00Z',
    agentId: 'a2',
    status: 'suspended',
  });
  t.has(
    asleep?.agents[1],
    { status: 'suspended', hibernation: 'paused' },
    'an agent that just hibernated is paused first',
  );
  t.has(
    applyToList(asleep, { previousStatus: 'suspended', at: '2026-11-25T10:01:00Z', agentId: 'a2', status: 'running' })
      ?.agents[1],
    { status: 'running', hibernation: null },
    'woken: no depth',
  );
});

t.test("the wallet sign-in message is EIP-4361 for this site and the API's nonce", async (t) => {
  const message = siweMessage({
    domain: 'console.example',
    origin: 'https://console.example',
    address: '0xAbC0000000000000000000000000000000000001',
    chainId: 8453,
    nonce: 'n0nce123',
    issuedAt: new Date('2026-11-25T10:00:00Z'),
  });
  t.equal(
    message,
    [
      'console.example wants you to sign in with your Ethereum account:',
      '0xAbC0000000000000000000000000000000000001',
      '',
      'Sign in to Agentyard.',
      '',
      'URI: https://console.example',
      'Version: 1',
      'Chain ID: 8453',
      'Nonce: n0nce123',
      'Issued At: 2026-11-25T10:00:00.000Z',
    ].join('\n'),
  );
});

t.test("an operation's end on the status stream, and the operations each status offers", async (t) => {
  t.same(
    parseAgentEvent(
      '{"agentId":"a1","status":"running","previousStatus":"running","at":"2026-11-25T10:00:00Z","action":"restart","outcome":"done"}',
    ),
    {
      agentId: 'a1',
      status: 'running',
      previousStatus: 'running',
      at: '2026-11-25T10:00:00Z',
      action: 'restart',
      outcome: 'done',
    },
  );
  t.match(
    parseAgentEvent(
      '{"agentId":"a1","status":"stopped","previousStatus":"stopped","at":"2026-11-25T10:00:00Z","action":"start","outcome":"failed","error":"Agent limit reached"}',
    ),
    {
      outcome: /^failed$/,
      error: 'Agent limit reached',
    },
  );
  t.notOk(
    'action' in
      parseAgentEvent(
        '{"agentId":"a1","status":"running","at":"2026-11-25T10:00:00Z","action":"restart","outcome":"maybe"}',
      )!,
    'an unknown outcome: a plain status event',
  );
  t.same(actionsFor('running'), ['stop', 'restart', 'repair', 'reset-memory', 'update', 'delete']);
  t.same(actionsFor('stopped'), ['start', 'repair', 'reset-memory', 'update', 'delete']);
  t.same(actionsFor('suspended'), actionsFor('running'), "a hibernating agent's operations are a running one's");
  t.same(actionsFor('error'), ['repair', 'delete'], 'an agent in error: repair or delete, never a dead end');
  t.same(actionsFor('provisioning'), ['delete']);
  for (const status of ['pending', 'provisioning', 'deploying', 'running', 'active', 'stopped', 'suspended', 'error'])
    t.ok(actionsFor(status).includes('delete'), `${status}: delete is offered`);
});
