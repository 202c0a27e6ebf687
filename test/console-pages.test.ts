import t from 'tap';
import { startPlatform } from '@agentyard/testing';
import { checkPage, consoleContext, launchBrowser, noBrowser, watchPolicy } from './support/browser.ts';

// The console's signed-out pages in Debian's Chromium against the real auth service behind the
// edge, on a server that registers by invite: what each page shows, its accessibility (axe-core:
// no serious or critical violation) at desktop and phone widths, a screenshot each, and no
// Content-Security-Policy refusal. The signed-in pages: console-journey.test.ts.
t.setTimeout(300_000);

t.test('signed-out pages, the API docs, at 1280 and 375 px', { skip: noBrowser }, async (t) => {
  const platform = await startPlatform(['auth'], { INVITE_REQUIRED: 'true' });
  t.teardown(() => platform.stop());
  const browser = await launchBrowser(t);
  for (const width of [1280, 375]) {
    const context = await consoleContext(browser, {
      webUrl: platform.webUrl,
      publicBaseUrl: platform.webUrl,
      width,
      height: 800,
    });
    const page = await context.newPage();
    const refusals = watchPolicy(page);
    const check = async (name: string) => {
      const result = await checkPage(page, 'console-pages', `${name}-${width}`);
      t.same(
        result.violations,
        [],
        `${name} at ${width} px: no serious or critical axe violation (${result.screenshot})`,
      );
    };

    await page.goto('/');
    await page.waitForURL(/\/login\?next=/);
    // The URL changes before the page has rendered its form: wait for the heading, then look.
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    t.ok(await page.getByRole('heading', { name: 'Sign in' }).isVisible(), 'a visitor lands on the sign-in page');
    t.ok(
      (await page.getByLabel('Email').isVisible()) && (await page.getByLabel('Password').isVisible()),
      'email and password, labelled',
    );
    t.equal(
      await page.getByRole('link', { name: 'Sign in with Google' }).count(),
      0,
      'no Google button when Google is not set up',
    );
    t.equal(
      await page.getByRole('button', { name: 'Sign in with your wallet' }).count(),
      0,
      'no wallet button without an injected wallet',
    );
    await check('login');

    await page.getByLabel('Email').fill('nobody@example.com');
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    const refusal = page.getByRole('alert');
    await refusal.waitFor();
    t.match(
      await refusal.textContent(),
      /invalid|incorrect|wrong/i,
      `a wrong password shows the API's message: ${await refusal.textContent()}`,
    );

    await page.goto('/login?error=GoogleNotConfigured');
    t.equal(
      await page.getByRole('alert').first().textContent(),
      'Google sign-in is not set up on this server.',
      '/login?error= in words',
    );

    await page.goto('/register');
    await page.getByLabel('Invite code').waitFor();
    t.ok(await page.getByLabel('Invite code').isVisible(), 'registration by invite shows the invite field');
    await check('register');
    await page.getByLabel('Email').fill('invitee@example.com');
    await page.getByLabel('Password', { exact: true }).fill('a long enough password');
    await page.getByLabel('Invite code').fill('0'.repeat(64));
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('alert').waitFor();
    t.match(
      await page.getByRole('alert').textContent(),
      /invite/i,
      `an unknown invite is refused in the API's words: ${await page.getByRole('alert').textContent()}`,
    );

    await page.goto('/forgot-password');
    await check('forgot-password');
    await page.getByLabel('Email').fill('nobody@example.com');
    await page.getByRole('button', { name: 'Send the link' }).click();
    await page.getByRole('status').waitFor();
    t.ok(
      await page.getByRole('status').isVisible(),
      `the API's answer: ${await page.getByRole('status').textContent()}`,
    );

    await page.goto('/reset-password?token=not-a-real-token');
    await check('reset-password');
    await page.getByLabel('New password', { exact: true }).fill('another long password');
    await page.getByLabel('New password again').fill('another long password');
    await page.getByRole('button', { name: 'Save the new password' }).click();
    await page.getByRole('alert').waitFor();
    t.ok(
      await page.getByRole('alert').textContent(),
      `a bad reset token: ${await page.getByRole('alert').textContent()}`,
    );

    await page.goto('/verify-email?token=not-a-real-token');
    await page.getByRole('alert').waitFor();
    t.ok(
      await page.getByRole('alert').textContent(),
      `a bad verification token: ${await page.getByRole('alert').textContent()}`,
    );
    await check('verify-email');

    await page.goto('/api/docs');
    // Tags start collapsed; every tag of the API is listed, and one opens to its operations.
    await page.locator('.opblock-tag', { hasText: 'scheduler' }).first().waitFor();
    t.same(
      await page.locator('.opblock-tag').allTextContents(),
      ['auth', 'bridge', 'trader', 'ai', 'agents', 'scheduler'],
      'every tag of the API',
    );
    await page.locator('.opblock-tag', { hasText: 'agents' }).first().click();
    await page.getByText('getApiAgentsById').first().waitFor();
    t.ok(await page.getByText('getApiAgentsById').first().isVisible(), 'the docs show operation ids');
    await page
      .getByRole('button', { name: /Authorize/ })
      .first()
      .click();
    await page.getByText('userApiKey').first().waitFor();
    t.ok(await page.getByText('userApiKey').first().isVisible(), 'and the sk_ bearer scheme');
    const docsShot = await checkPage(page, 'console-pages', `api-docs-${width}`);
    t.comment(
      `API docs: ${docsShot.violations.length} serious/critical axe findings in Swagger UI itself (${docsShot.screenshot})`,
    );

    t.same(refusals, [], `no Content-Security-Policy refusal or page error at ${width} px`);
    await context.close();
  }
});
