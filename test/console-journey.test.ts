import t from 'tap';
import { DEFAULT_AGENT_IMAGE, LABELS } from '@agentyard/runtime';
import { startLocalProviders, startWholePlatform, uniqueEmail } from '@agentyard/testing';
import type { Page } from 'playwright-core';
import { startMailbox } from '../scripts/lib/mailbox.ts';
import { checkPage, consoleContext, launchBrowser, noBrowser, watchPolicy } from './support/browser.ts';
import { noAgentContainers, runContainers } from './support/containers.ts';
import { observe } from './support/journey.ts';

// A new user's whole journey through the console in Debian's Chromium, on the platform as `npm start`
// runs it (every service and worker, the development billing provider, the development mailbox, the
// real OpenClaw image in the container engine): sign up, verify from the mailbox's web inbox,
// subscribe at the local checkout, provision and watch the agent come up live, chat with it (the
// answer streamed from the local model server), read its logs, upload/download/delete a file, open
// its memory, skills, metrics and devices, save and restore a configuration, add a scheduled task,
// see usage, create and delete an API key, sign out. Every
// page: axe-core (no serious or critical violation) and a screenshot under test-artifacts/console/.
// Heavy like paying-user-journey.test.ts (one agent, removed at the end).
t.setTimeout(1_500_000);

const skip = noBrowser || noAgentContainers;
t.test(
  'sign up, verify, pay, provision, configure, schedule, keys, sign out: all in the browser',
  { skip },
  async (t) => {
    const { own, ours, removeOurs } = runContainers();
    const model = await startLocalProviders(t);
    const mailbox = await startMailbox({ smtpPort: 0, webPort: 0 });
    t.teardown(() => mailbox.close());
    const platform = await startWholePlatform(
      {
        RUNTIME_INSTANCE: own,
        AGENT_IMAGE: DEFAULT_AGENT_IMAGE,
        AGENT_PORT_RANGE: '38000-38999',
        AGENT_READY_TIMEOUT_MS: '420000',
        OPENAI_BASE_URL: model.env.OPENAI_BASE_URL,
        OPENAI_API_KEY: model.env.OPENAI_API_KEY,
        SMTP_URL: mailbox.smtpUrl,
        BILLING_PROVIDER: 'local',
      },
      { listenTimeoutMs: 180_000 },
    );
    let owner = '';
    t.teardown(async () => {
      await removeOurs();
      await platform.stop();
    });
    const removeAgent = async (id: string) =>
      fetch(`${platform.backendUrl}/api/agents/${id}`, {
        method: 'DELETE',
        signal: AbortSignal.timeout(60_000),
        headers: { authorization: `Bearer ${platform.env.INTERNAL_API_KEY}`, 'x-user-id': owner },
      });

    const browser = await launchBrowser(t);
    // The browser reaches the platform at PUBLIC_BASE_URL, what its mails and redirects name.
    const home = platform.env.PUBLIC_BASE_URL!.replace(/\/$/, '');
    const context = await consoleContext(browser, { webUrl: platform.webUrl, publicBaseUrl: home });
    const page = await context.newPage();
    const refusals = watchPolicy(page);
    const pageChecked = async (name: string, on: Page = page) => {
      const { violations, screenshot } = await checkPage(on, 'console-journey', name);
      t.same(violations, [], `${name}: no serious or critical axe violation (${screenshot})`);
    };
    const heading = (name: string | RegExp) => page.getByRole('heading', { name, level: 1 }).waitFor();
    const nav = (name: string) =>
      page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true }).click();

    // 1. Sign up.
    const email = uniqueEmail('console');
    const password = 'a console journey password';
    await page.goto('/register');
    await page.getByLabel('Name').fill('Console Journey');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password', { exact: true }).fill(password);
    await pageChecked('register');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.waitForURL('**/dashboard?welcome=1');
    await heading('Dashboard');
    t.ok(await page.getByText('not verified yet').isVisible(), 'the dashboard says the address is not verified');
    await page.getByRole('heading', { name: 'No agents yet' }).waitFor();
    t.pass('an empty dashboard says what to do next');
    await page.getByText('No plan yet').waitFor();
    await pageChecked('dashboard-new-user');
    owner = await page.evaluate(
      async () => ((await (await fetch('/api/auth/session')).json()) as { user: { id: string } }).user.id,
    );

    // 2. Verify from the development mailbox's web inbox (it offers no event: its list is read until the mail is there).
    await observe(
      async () => (await (await fetch(`${mailbox.inboxUrl}messages.json`)).json()) as { to: string[] }[],
      (mails) => mails.some((m) => m.to.includes(email.toLowerCase())),
      { everyMs: 500, deadlineMs: 120_000, what: 'the verification mail in the inbox' },
    );
    const inbox = await context.newPage();
    await inbox.goto(mailbox.inboxUrl);
    const link = inbox
      .locator('article', { hasText: email.toLowerCase() })
      .getByRole('link', { name: /verify-email\?token=/ })
      .first();
    t.match(
      await link.getAttribute('href'),
      `${home}/verify-email?token=`,
      "the mail links to the console's verification page",
    );
    await link.click();
    await inbox.getByText('Your email address is verified.').waitFor();
    await pageChecked('verify-email', inbox);
    await inbox.close();
    await page.reload();
    await heading('Dashboard');
    t.equal(await page.getByText('not verified yet').count(), 0, 'verified: the banner is gone');

    // 3. Subscribe at the development checkout.
    await nav('Billing');
    await heading('Billing');
    await pageChecked('billing-no-plan');
    await page.getByRole('button', { name: 'Subscribe to solo' }).click();
    await page.waitForURL(/\/api\/billing\/local-checkout\//);
    await page.getByRole('heading', { name: 'Development checkout' }).waitFor();
    t.pass('the local checkout page');
    await page.getByRole('button', { name: 'Complete development checkout' }).click();
    await page.waitForURL('**/dashboard?checkout=success');
    await page.getByText('your plan is active').waitFor();
    await page.getByText('solo', { exact: true }).first().waitFor();
    t.pass('the dashboard shows the plan');

    // 4. Provision, and watch the agent come up.
    await nav('New agent');
    await heading('Provision an agent');
    await pageChecked('new-agent');
    await page.getByLabel('Agent name').fill('Marigold');
    await page.getByRole('button', { name: 'Provision' }).click();
    await page.waitForURL(/\/agents\/[0-9a-f-]{36}$/);
    const agentId = page.url().split('/').at(-1)!;
    t.teardown(() => removeAgent(agentId).then(() => undefined));
    await heading('Marigold');
    t.ok(await page.getByRole('list').filter({ hasText: 'Requested' }).isVisible(), 'the provisioning steps are shown');
    await pageChecked('agent-provisioning');
    const running = page.locator('.badge', { hasText: 'Running' });
    // No reload: the status arrives over GET /api/events as the agents worker changes it.
    await running.waitFor({ timeout: 540_000 });
    t.pass('the status went live without a reload (GET /api/events)');
    if (!t.ok(await running.isVisible(), 'the agent runs')) return;
    t.same(
      (await ours()).map((c) => c.Labels[LABELS.agentId]),
      [agentId],
      'one container for it',
    );
    await page.getByRole('button', { name: 'Show token' }).click();
    const token = await page.locator('code.secret').textContent();
    t.ok(token && token.length >= 16, 'the gateway token is revealed on request');
    await page.getByRole('button', { name: 'Copy the gateway token' }).click();
    t.equal(
      await page.evaluate(() =>
        (navigator as unknown as { clipboard: { readText(): Promise<string> } }).clipboard.readText(),
      ),
      token,
      'and copied',
    );
    await page.getByRole('button', { name: 'Hide' }).click();
    // Every operation a running agent allows is on its page (issue 29); starting it is not.
    const lifecycle = page.getByRole('region', { name: 'Start, stop, repair and delete' });
    for (const name of ['Stop', 'Restart', 'Repair', 'Reset memory', 'Update image', 'Delete agent'])
      t.ok(await lifecycle.getByRole('button', { name, exact: true }).isVisible(), `${name} is offered`);
    t.equal(
      await lifecycle.getByRole('button', { name: 'Start', exact: true }).count(),
      0,
      'Start is not offered while it runs',
    );
    await pageChecked('agent-running');

    // 4b. Work with the running agent: chat (streamed from the local model server), logs, files.
    const agentPage = (name: string) =>
      page.getByRole('navigation', { name: 'Agent' }).getByRole('link', { name, exact: true }).click();
    await agentPage('Chat');
    await page.getByRole('heading', { name: 'Chat', level: 2 }).waitFor();
    await page.getByText('No messages yet').waitFor();
    await pageChecked('agent-chat-empty');
    await page.getByLabel('Message to the agent').fill('Hello, Marigold. Who answers?');
    const answered = page.waitForResponse(
      (r) => new URL(r.url()).pathname === '/api/chat' && r.request().method() === 'POST',
      { timeout: 240_000 },
    );
    // Enter sends, as in any chat box.
    await page.getByLabel('Message to the agent').press('Enter');
    const turn = await answered;
    t.equal(turn.status(), 200, 'the turn is answered');
    t.match(turn.headers()['content-type'], /^text\/event-stream/, 'as a stream of events');
    const conversation = page.getByRole('log', { name: 'Conversation' });
    await conversation.getByText('Hello from the local provider').waitFor({ timeout: 240_000 });
    t.ok(
      await conversation.getByText('Hello, Marigold. Who answers?').isVisible(),
      'the question is in the conversation',
    );
    t.pass("the local model server's answer, through the agent's gateway, is shown");
    await page.getByRole('button', { name: 'Send', exact: true }).waitFor();
    await pageChecked('agent-chat');

    await agentPage('Logs');
    await page.getByRole('heading', { name: 'Logs', level: 2 }).waitFor();
    await page.getByText('Showing new lines as the agent writes them').waitFor();
    const output = page.getByRole('log', { name: 'Agent output' });
    await output.locator('li').first().waitFor();
    t.ok((await output.locator('li').count()) > 0, "the agent's output is shown, with the live stream open");
    await pageChecked('agent-logs');

    await agentPage('Files');
    await page.getByRole('heading', { name: 'Files', level: 2 }).waitFor();
    await page.getByText('This folder is empty.').waitFor();
    const notes = "Marigold's journey notes: chat, logs and files.\n";
    await page
      .getByLabel('File to upload')
      .setInputFiles({ name: 'journey-notes.txt', mimeType: 'text/plain', buffer: Buffer.from(notes) });
    await page.getByRole('button', { name: 'Upload', exact: true }).click();
    await page.getByText(`Uploaded uploads/journey-notes.txt (${notes.length} B)`).waitFor();
    await page.getByRole('cell', { name: 'journey-notes.txt', exact: true }).waitFor();
    t.pass('the uploaded file is listed');
    await pageChecked('agent-files');
    // The link's own address, read in the page: Chromium cancels a download the test's route answers (route.fulfill).
    const download = page.getByRole('link', { name: 'Download journey-notes.txt' });
    t.equal(await download.getAttribute('download'), 'journey-notes.txt', 'the link downloads the file by its name');
    const downloaded = await page.evaluate(
      async (href) => {
        const response = await fetch(href!);
        return {
          status: response.status,
          disposition: response.headers.get('content-disposition'),
          text: await response.text(),
        };
      },
      await download.getAttribute('href'),
    );
    t.match(
      downloaded,
      { status: 200, disposition: /^attachment; filename="journey-notes.txt"/, text: notes },
      'and its address answers it as uploaded, as an attachment',
    );
    await page.getByRole('button', { name: 'Delete journey-notes.txt' }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Delete file' }).click();
    await page.getByText('This folder is empty.').waitFor();
    t.pass('deleted after confirming');

    // The agent's other pages, each read from its gateway or the platform.
    await agentPage('Memory');
    await page.getByRole('textbox', { name: 'MEMORY.md' }).waitFor();
    await page.getByRole('heading', { name: 'Memory notes' }).waitFor();
    await pageChecked('agent-memory');
    await agentPage('Skills');
    await page.getByRole('heading', { name: 'Bundled skills' }).waitFor();
    t.ok(
      (await page.getByRole('button', { name: /^Install the skill / }).count()) > 0,
      "the bundled skills of the agent's OpenClaw are offered",
    );
    await pageChecked('agent-skills');
    await agentPage('Metrics');
    await page.getByRole('heading', { name: 'Uptime' }).waitFor();
    await pageChecked('agent-metrics');
    await agentPage('Devices');
    await page.getByRole('heading', { name: 'Waiting for approval' }).waitFor();
    await pageChecked('agent-devices');
    await agentPage('Overview');

    // 5. A scheduled task on the agent (yearly: it does not fire during the test).
    await page.getByLabel('Task name').fill('New year greeting');
    await page.getByLabel('Cron schedule').fill('0 0 1 1 *');
    await page.getByLabel('Prompt').fill('Wish the team a happy new year.');
    await page.getByRole('button', { name: 'Add task' }).click();
    await page.getByText('Scheduled “New year greeting”').waitFor();
    await page.getByRole('cell', { name: 'New year greeting', exact: true }).waitFor();
    t.pass('the task is listed');

    // 6. Configuration: an in-place error, a save, a restore.
    await nav('Configuration');
    await heading('Configuration');
    const editor = page.getByLabel('Configuration (JSON)');
    const original = await editor.inputValue();
    await editor.fill(`${original.trim()},`);
    await page.getByText(/Not valid JSON/).waitFor();
    t.ok(
      await page.getByRole('button', { name: 'Save configuration' }).isDisabled(),
      'invalid JSON cannot be saved; the error is shown in place',
    );
    await pageChecked('config-invalid');
    await editor.fill(JSON.stringify(JSON.parse(original)));
    await page.getByRole('button', { name: 'Save configuration' }).click();
    await page.getByText('Saved; the previous configuration is backed up.').waitFor();
    const restoreButtons = page.getByRole('button', { name: /^Restore the backup of / });
    t.ok((await restoreButtons.count()) >= 1, 'the save left a backup');
    await restoreButtons.first().click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Restore' }).click();
    // Exact: the page's own description says backups "can be restored." and would match a substring.
    await page.getByText('Restored.', { exact: true }).waitFor();
    t.pass('a backup restored');
    await pageChecked('config-restored');

    // 7. Usage and cost.
    await nav('Usage');
    await heading('Usage and cost');
    await page.getByRole('heading', { name: 'AI cost' }).waitFor();
    await pageChecked('usage');

    // 8. An API key: created and shown once, copied, deleted.
    await nav('API keys');
    await heading('API keys');
    await pageChecked('keys-empty');
    await page.getByLabel('Key name').fill('journey key');
    await page.getByRole('button', { name: 'Create key' }).click();
    const key = await page.locator('code.secret').textContent();
    t.match(key, /^sk_/, 'the new key is shown');
    await page.getByRole('button', { name: 'Copy the new API key' }).click();
    t.equal(
      await page.evaluate(() =>
        (navigator as unknown as { clipboard: { readText(): Promise<string> } }).clipboard.readText(),
      ),
      key,
      'and copied',
    );
    const asKey = () =>
      fetch(`${platform.webUrl}/api/settings`, {
        headers: { authorization: `Bearer ${key}` },
        signal: AbortSignal.timeout(30_000),
      });
    t.match(await (await asKey()).json(), { id: owner }, 'the key acts as its owner on the API');
    await page.getByRole('button', { name: 'I have copied it' }).click();
    t.equal(await page.locator('code.secret').count(), 0, 'never shown again');
    await pageChecked('keys-one');
    await page.getByRole('button', { name: 'Delete the key journey key' }).click();
    await page.getByRole('button', { name: 'Delete key' }).click();
    await page.getByRole('heading', { name: 'No API keys' }).waitFor();
    t.equal((await asKey()).status, 401, 'the deleted key acts as nobody');

    // 9. Settings and schedules, at a phone's width too.
    await nav('Settings');
    await heading('Settings');
    await pageChecked('settings');
    await nav('Schedules');
    await heading('Schedules');
    await pageChecked('schedules');
    await page.setViewportSize({ width: 375, height: 800 });
    await page.getByRole('button', { name: 'Menu' }).click();
    await nav('Dashboard');
    await heading('Dashboard');
    await page.getByRole('link', { name: 'Marigold' }).waitFor();
    await pageChecked('dashboard-375');
    await page.getByRole('link', { name: 'Marigold' }).click();
    await heading('Marigold');
    await pageChecked('agent-375');
    await page.getByRole('navigation', { name: 'Agent' }).getByRole('link', { name: 'Chat', exact: true }).click();
    await page.getByRole('log', { name: 'Conversation' }).getByText('Hello from the local provider').waitFor();
    t.pass("the conversation is read back from the agent's gateway");
    await pageChecked('agent-chat-375');
    await page.setViewportSize({ width: 1280, height: 900 });

    // 9b. Delete the agent from its page, after the confirmation: back on the dashboard, no container left.
    await page.getByRole('navigation', { name: 'Agent' }).getByRole('link', { name: 'Overview', exact: true }).click();
    await page.getByRole('button', { name: 'Delete agent', exact: true }).click();
    await pageChecked('agent-delete-confirm');
    await page.getByRole('alertdialog').getByRole('button', { name: 'Delete agent' }).click();
    await page.waitForURL('**/dashboard', { timeout: 120_000 });
    await page.getByRole('heading', { name: 'No agents yet' }).waitFor();
    t.same(await ours(), [], 'deleted from the console: no container left');

    // 10. Sign out.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL('**/login');
    await page.goto('/dashboard');
    await page.waitForURL(/\/login\?next=%2Fdashboard/);
    t.pass('signed out: the dashboard asks to sign in');
    t.same(refusals, [], 'no Content-Security-Policy refusal or page error on any page');
  },
);
