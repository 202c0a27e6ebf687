import t from 'tap';
import { randomUUID } from 'node:crypto';
import { startPlatform, subscribeUser, systemDb, uniqueEmail } from '@agentyard/testing';
import { checkPage, consoleContext, launchBrowser, noBrowser, watchPolicy, signIn } from './support/browser.ts';

// Mission control, swarms and installations in Debian's Chromium, signed in, against the real
// services behind the edge: what each page shows of the user's own fleet, its accessibility
// (axe-core: no serious or critical violation) at desktop and phone widths, a screenshot each,
// and no Content-Security-Policy refusal.
t.setTimeout(300_000);

t.test('mission control, swarms and installations at 1280 and 375 px', { skip: noBrowser }, async (t) => {
  const platform = await startPlatform(['auth', 'agents', 'ai'], {
    QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}-e2e-fleet-console`,
    RATE_LIMITS: 'web-register=1000',
  });
  t.teardown(() => platform.stop());
  const email = uniqueEmail('fleet-console');
  const password = 'fleet console password';
  const json = (path: string, body: object, cookie = '') =>
    fetch(`${platform.webUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(cookie ? { cookie } : {}) },
      body: JSON.stringify(body),
    });
  t.equal((await json('/api/register', { email, password })).status, 201);
  const { id: userId } = await systemDb()
    .selectFrom('users')
    .select('id')
    .where('email', '=', email)
    .executeTakeFirstOrThrow();
  await subscribeUser(userId, 'collective');
  const agent = (name: string, status: 'running' | 'stopped') =>
    systemDb()
      .insertInto('agents')
      .values({
        user_id: userId,
        name,
        status,
        model: 'm',
        tools_profile: 'messaging',
        subdomain: `fc-${randomUUID().slice(0, 8)}`,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
  const scout = await agent('scout', 'running');
  const writer = await agent('writer', 'stopped');
  await systemDb()
    .insertInto('bus_messages')
    .values({
      message_id: randomUUID(),
      user_id: userId,
      from_agent_id: scout.id,
      to_agent_id: writer.id,
      action: 'PING',
      payload: '{}',
      signed_at: new Date(),
      signature: '0x',
      delivered_at: new Date(),
    })
    .execute();
  const login = await json('/api/auth/login', { email, password });
  const cookie = login.headers
    .getSetCookie()
    .find((c) => c.startsWith('agentyard-session='))!
    .split(';')[0]!;
  t.equal((await json('/api/swarms', { name: 'pair', agentIds: [scout.id, writer.id] }, cookie)).status, 201);
  const { key } = (await (await json('/api/keys', { name: 'laptop' }, cookie)).json()) as { key: string };
  const linked = await fetch(`${platform.webUrl}/api/register-link`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({
      mode: 'remote',
      name: 'garage-pi',
      gatewayUrl: 'https://claw.example.test',
      gatewayToken: 'a gateway token',
    }),
  });
  t.equal(linked.status, 201);

  const browser = await launchBrowser(t);
  for (const width of [1280, 375]) {
    const context = await consoleContext(browser, {
      webUrl: platform.webUrl,
      publicBaseUrl: platform.webUrl,
      width,
      height: 900,
    });
    const page = await context.newPage();
    const refusals = watchPolicy(page);
    const check = async (name: string) => {
      const result = await checkPage(page, 'fleet-console', `${name}-${width}`);
      t.same(
        result.violations,
        [],
        `${name} at ${width} px: no serious or critical axe violation (${result.screenshot})`,
      );
    };
    await signIn(page, email, password);

    await page.goto('/mission-control');
    await page.getByRole('heading', { name: 'Mission control', level: 1 }).waitFor();
    await page.getByRole('img', { name: /2 agents and 1 bus links/ }).waitFor();
    t.ok(
      await page.getByRole('table', { name: 'Agents' }).getByRole('link', { name: 'scout' }).isVisible(),
      'the agents table names them',
    );
    t.match(
      await page.getByRole('table', { name: /Bus traffic/ }).textContent(),
      /scout\s*writer\s*1/,
      'the bus message from scout to writer',
    );
    await page.getByRole('heading', { name: /Costs in/ }).waitFor();
    t.match(
      await page
        .getByRole('heading', { name: /Costs in/ })
        .locator('..')
        .textContent(),
      /Plan collective/,
    );
    await page.getByLabel('Kind of run').selectOption('bus');
    await page.getByRole('cell', { name: 'bus', exact: true }).waitFor();
    t.ok(
      await page.getByRole('cell', { name: 'delivered' }).isVisible(),
      'the runs table shows the delivered bus message',
    );
    await check('mission-control');

    await page.goto('/swarms');
    await page.getByRole('heading', { name: 'pair', level: 2 }).waitFor();
    // The members read as ids until the agents list has loaded: their names are waited for.
    await page.getByRole('region', { name: 'pair' }).getByText('Members: scout, writer').waitFor();
    t.pass('the members by name');
    t.ok(await page.getByLabel('Message to pair').isVisible(), 'the run form, labelled');
    await check('swarms');

    await page.goto('/installations');
    await page.getByRole('cell', { name: 'garage-pi', exact: true }).waitFor();
    t.ok(await page.getByRole('cell', { name: 'Online', exact: true }).isVisible(), 'registered just now: online');
    t.ok(await page.getByRole('cell', { name: 'https://claw.example.test' }).isVisible());
    t.notOk((await page.content()).includes('a gateway token'), 'the token is never shown');
    await check('installations');

    t.same(refusals, [], `no Content-Security-Policy refusal or page error at ${width} px`);
    await context.close();
  }
});
