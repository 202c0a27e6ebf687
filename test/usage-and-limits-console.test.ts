import t from 'tap';
import { startLocalProviders, startPlatform, systemDb, uniqueEmail, subscribeUser } from '@agentyard/testing';
import { checkPage, consoleContext, launchBrowser, noBrowser, watchPolicy } from './support/browser.ts';

// The usage page's failed calls and the budgets page's per-key minute limits in Debian's Chromium,
// signed in, against the real auth and ai services behind the edge and a local provider that fails.
t.setTimeout(300_000);

t.test(
  'the owner sees a failed call with each attempt, and sets an API key’s minute limits',
  { skip: noBrowser },
  async (t) => {
    const providers = await startLocalProviders(t);
    const platform = await startPlatform(['auth', 'agents', 'ai'], {
      ...providers.env,
      USAGE_FLUSH_MS: '50',
      QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}-e2e-usage-console`,
      RATE_LIMITS: 'web-register=1000',
    });
    t.teardown(() => platform.stop());
    const email = uniqueEmail('usage-console');
    const password = 'usage console password';
    const json = (method: string, path: string, body?: object, headers: Record<string, string> = {}) =>
      fetch(`${platform.webUrl}${path}`, {
        method,
        headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...headers },
        body: body && JSON.stringify(body),
      });
    t.equal((await json('POST', '/api/register', { email, password })).status, 201);
    const { id: userId } = await systemDb()
      .selectFrom('users')
      .select('id')
      .where('email', '=', email)
      .executeTakeFirstOrThrow();
    await subscribeUser(userId, 'collective');
    const login = await json('POST', '/api/auth/login', { email, password });
    const cookie = login.headers
      .getSetCookie()
      .find((c) => c.startsWith('agentyard-session='))!
      .split(';')[0]!;
    const created = (await (await json('POST', '/api/keys', { name: 'laptop' }, { cookie })).json()) as {
      id: string;
      key: string;
    };

    // One call that every provider fails: three tries of the primary (503), three of the fallback (429).
    providers.failNext.set('gpt-4o-mini', { status: 503, times: 3 });
    providers.failNext.set('gemini-2.5-flash', { status: 429, times: 3 });
    const failed = await json(
      'POST',
      '/v1/chat/completions',
      { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] },
      { authorization: `Bearer ${created.key}` },
    );
    t.equal(failed.status, 500);
    // The service writes usage in batches (every 50 ms here): the page is opened once the row is in.
    const deadline = Date.now() + 30_000;
    while (
      (await systemDb().selectFrom('usage_events').select('id').where('user_id', '=', userId).execute()).length === 0 &&
      Date.now() < deadline
    )
      await new Promise((resolve) => setTimeout(resolve, 50));

    const browser = await launchBrowser(t);
    const context = await consoleContext(browser, {
      webUrl: platform.webUrl,
      publicBaseUrl: platform.webUrl,
      width: 1280,
      height: 900,
    });
    const page = await context.newPage();
    const refusals = watchPolicy(page);
    const check = async (name: string) => {
      const result = await checkPage(page, 'usage-and-limits-console', name);
      t.same(result.violations, [], `${name}: no serious or critical axe violation (${result.screenshot})`);
    };
    await page.goto('/login');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/dashboard/);

    await page.goto('/usage');
    const failedCalls = page.getByRole('region', { name: 'Failed calls' });
    const call = failedCalls.getByText(/openai\/gpt-4o-mini · 6 attempts/);
    await call.waitFor();
    await call.click();
    const attempts = failedCalls.getByRole('table', { name: /Attempts of the call/ });
    await attempts.waitFor();
    const rows = await attempts.locator('tbody tr').allTextContents();
    t.equal(rows.length, 6, 'one row an attempt');
    t.match(
      rows.slice(0, 3),
      Array(3).fill(/openai\/gpt-4o-mini\s*openai\s*503/),
      'the primary’s three tries, each 503',
    );
    t.match(rows.slice(3), Array(3).fill(/google\/gemini-2\.5-flash\s*gemini\s*429/), 'the fallback’s three, each 429');
    await check('usage-failed-calls');

    await page.goto('/billing');
    const keyLimits = page.getByRole('region', { name: 'API key AI limits' });
    await keyLimits.getByLabel('Requests per minute').waitFor();
    await keyLimits.getByLabel('Requests per minute').fill('7');
    await keyLimits.getByLabel('Tokens per minute').fill('9000');
    await keyLimits.getByRole('button', { name: 'Save key limits' }).click();
    await keyLimits.getByText('Saved.').waitFor();
    const limitsOf = async () =>
      (await (await json('GET', `/api/keys/${created.id}/limits`, undefined, { cookie })).json()) as {
        requestsPerMinute: number | null;
        tokensPerMinute: number | null;
      };
    t.match(await limitsOf(), { requestsPerMinute: 7, tokensPerMinute: 9000 }, 'saved through the API');

    await keyLimits.getByLabel('Requests per minute').fill('121');
    await keyLimits.getByRole('button', { name: 'Save key limits' }).click();
    const refusal = keyLimits.getByRole('alert');
    await refusal.waitFor();
    t.match(
      await refusal.textContent(),
      /at most 120 on the collective plan/,
      `past the cap, the API's words: ${await refusal.textContent()}`,
    );
    t.match(await limitsOf(), { requestsPerMinute: 7, tokensPerMinute: 9000 }, 'and nothing changed');
    await check('budget-key-limits');
    t.same(refusals, [], 'no Content-Security-Policy refusal or page error');
  },
);
