import t from 'tap';
import { LABELS } from '@agentyard/runtime';
import { startAgentJourney } from './support/agent-journey.ts';
import { checkPage, consoleContext, launchBrowser, noBrowser, watchPolicy, signIn } from './support/browser.ts';
import { noAgentContainers } from './support/containers.ts';
import { observe } from './support/journey.ts';

// An owner changes a running agent's configuration through the edge, on the real OpenClaw image:
// the log level, checked by the installed OpenClaw and applied by hot reload (the gateway says so in
// its own log; same container, same start, status never leaves running); a document OpenClaw refuses
// is a 400 naming the path and changes nothing; a backup restored comes back the same way. Then the
// same in Chromium on the agent's Configuration page (axe: no serious or critical violation).
t.setTimeout(1_500_000);

t.test(
  "an owner's configuration changes reach the running agent live; a refused one changes nothing; a backup comes back",
  { skip: noAgentContainers },
  async (t) => {
    const journey = await startAgentJourney(
      t,
      { AGENT_PORT_RANGE: '37000-37499', AGENT_READY_TIMEOUT_MS: '840000' },
      { logsOf: ['agents worker'] },
    );
    const { docker, ours, platform } = journey;
    const { web, userId: owner, email, password } = await journey.subscriber('agent-config', 'collective');

    const provisioned = await web.request('POST', '/api/agents/provision', { name: 'Configurable' });
    t.equal(provisioned.status, 201);
    const id = ((await provisioned.json()) as { agent: { id: string } }).agent.id;
    journey.removeAtEnd(id, owner);
    const status = async () =>
      ((await (await web.request('GET', `/api/agents/${id}`)).json()) as { agent: { status: string } }).agent.status;
    const settled = await observe(status, (s) => s !== 'provisioning' && s !== 'pending', {
      everyMs: 1000,
      deadlineMs: 900_000,
      what: 'the agent running',
    }).catch((error) => {
      t.comment(`agents worker, last lines:\n${platform.logs.lines('agents worker').slice(-30).join('\n')}`);
      throw error;
    });
    if (settled !== 'running') {
      const detail = await (await web.request('GET', `/api/agents/${id}`)).json();
      t.comment(
        `the agent: ${JSON.stringify(detail)}\nagents worker, last lines:\n${platform.logs.lines('agents worker').slice(-30).join('\n')}`,
      );
    }
    if (!t.equal(settled, 'running')) return;

    /** The agent's container as the engine has it: its id and when it started. */
    const container = async () => {
      const [listed] = (await ours()).filter((c) => c.Labels[LABELS.agentId] === id);
      const inspected = await docker.getContainer(listed!.Id).inspect();
      return { id: inspected.Id, startedAt: inspected.State.StartedAt, running: inspected.State.Running };
    };
    /** The gateway's own output lines, through the owner's log route. */
    const logLines = async () =>
      (
        (await (await web.request('GET', `/api/logs/${id}/history?lines=1000`)).json()) as { lines: { text: string }[] }
      ).lines.map((l) => l.text);
    const reloadsOf = (lines: string[]) =>
      lines.filter(
        (line) =>
          /config change (applied|detected)|config hot reload applied/.test(line) && line.includes('logging.level'),
      );
    type Saved = {
      applied: string;
      backupId: string;
      config: Record<string, unknown>;
      checkedBy: string | null;
      backups: { id: string }[];
    };
    type View = {
      config: Record<string, unknown>;
      appliedConfig: { logging: { level: string } };
      backups: { id: string }[];
    };
    const view = async () => (await (await web.request('GET', `/api/agents/${id}/config`)).json()) as View;

    const before = await container();
    t.ok(before.running, 'the gateway runs');
    const reloadsBefore = reloadsOf(await logLines()).length;

    // 1. The log level, through PUT: checked by OpenClaw, applied live.
    const changed = await web.request('PUT', `/api/agents/${id}/config`, { logLevel: 'debug' }, { timeoutMs: 120_000 });
    t.equal(changed.status, 200, 'saved');
    const saved = (await changed.json()) as Saved;
    t.equal(saved.applied, 'hot-reload', 'the answer says: hot reload');
    t.equal(saved.checkedBy, 'openclaw@2026.9.6', 'checked by the installed OpenClaw');
    const reloaded = await observe(logLines, (lines) => reloadsOf(lines).length > reloadsBefore, {
      everyMs: 1000,
      deadlineMs: 120_000,
      what: 'the gateway reloading its config',
    });
    t.comment(`the gateway: ${reloadsOf(reloaded).at(-1)}`);
    t.match(
      reloadsOf(reloaded).at(-1),
      /evaluating reload \(logging\.level\)|applied \(.*logging\.level/,
      'the gateway itself reports the one changed path, taken without a restart (its AI key kept)',
    );
    t.same(await container(), before, 'the same container, started at the same time: no restart');
    t.equal(await status(), 'running', 'its status never left running');
    t.equal((await view()).appliedConfig.logging.level, 'debug');

    // 2. A document OpenClaw refuses: 400 naming the path, nothing changes.
    const refused = await web.request(
      'PUT',
      `/api/agents/${id}/config`,
      { config: { logging: { level: 'info', colour: 'red' } } },
      { timeoutMs: 120_000 },
    );
    t.equal(refused.status, 400);
    t.match(
      ((await refused.json()) as { error: string }).error,
      /^Invalid config: logging: Unrecognized key: "colour"/,
      'in OpenClaw’s words, naming the path',
    );
    const afterRefusal = await view();
    t.equal(afterRefusal.appliedConfig.logging.level, 'debug', 'the configuration is as it was');
    t.equal(afterRefusal.backups.length, 1, 'and no backup was made');
    t.same(await container(), before, 'and the agent untouched');

    // 3. The backup made by the save brings the earlier level back, live.
    const reloadsBeforeRestore = reloadsOf(await logLines()).length;
    const restored = await web.request(
      'POST',
      `/api/agents/${id}/config/restore`,
      { backupId: saved.backupId },
      { timeoutMs: 120_000 },
    );
    t.equal(restored.status, 200, 'restored');
    t.equal(((await restored.json()) as Saved).applied, 'hot-reload');
    await observe(logLines, (lines) => reloadsOf(lines).length > reloadsBeforeRestore, {
      everyMs: 1000,
      deadlineMs: 120_000,
      what: 'the gateway reloading the restored config',
    });
    t.equal((await view()).appliedConfig.logging.level, 'info', 'the level before the save');
    t.same(await container(), before, 'still the same container');

    // 4. The same in the console: the agent's Configuration page.
    if (noBrowser) {
      t.comment(`console part skipped: ${noBrowser}`);
      return;
    }
    const browser = await launchBrowser(t);
    const context = await consoleContext(browser, {
      webUrl: platform.webUrl,
      publicBaseUrl: platform.env.PUBLIC_BASE_URL!.replace(/\/$/, ''),
    });
    const page = await context.newPage();
    const refusals = watchPolicy(page);
    const checked = async (name: string) => {
      const { violations, screenshot } = await checkPage(page, 'agent-config-journey', name);
      t.same(violations, [], `${name}: no serious or critical axe violation (${screenshot})`);
    };
    await signIn(page, email, password);
    await page.goto(`/agents/${id}/config`);
    await page.getByRole('heading', { name: 'Common settings' }).waitFor();
    t.equal(await page.getByLabel('Log level').inputValue(), 'info', 'the form shows the agent’s level');
    await checked('agent-config');

    await page.getByLabel('Log level').selectOption('warn');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Saved and applied by hot reload').waitFor({ timeout: 120_000 });
    t.pass('the page says the change was applied by hot reload');
    t.equal((await view()).appliedConfig.logging.level, 'warn');

    await page.getByLabel('Configuration (JSON)').fill(JSON.stringify({ session: { dmScope: 'everyone' } }));
    await page.getByRole('button', { name: 'Save configuration' }).click();
    const problem = page.locator('#agent-config-problem[role="alert"]');
    await problem.waitFor({ timeout: 120_000 });
    t.match(
      await problem.textContent(),
      /session\.dmScope/,
      `the refusal names the path where it was typed: ${await problem.textContent()}`,
    );
    await checked('agent-config-refused');

    await page.getByRole('button', { name: 'Discard changes' }).click();
    await page
      .getByRole('button', { name: /^Restore the backup of/ })
      .first()
      .click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Restore' }).click();
    await page.getByText('Saved and applied by hot reload').waitFor({ timeout: 120_000 });
    t.equal((await view()).appliedConfig.logging.level, 'info', 'the newest backup (before warn) is back');
    t.same(await container(), before, 'and through all of it, the same container');
    t.same(refusals, [], 'no Content-Security-Policy refusal or page error');
    await context.close();
  },
);
