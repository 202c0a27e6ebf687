import t from 'tap';
import { randomBytes } from 'node:crypto';
import { LABELS } from '@agentyard/runtime';
import { startMailServer, startWholePlatform, uniqueEmail } from '@agentyard/testing';
import { checkPage, consoleContext, launchBrowser, noBrowser, watchPolicy, signIn } from './support/browser.ts';
import { noAgentContainers, runContainers } from './support/containers.ts';
import { observe, payAtLocalCheckout, registerAndVerify, WebClient } from './support/journey.ts';

// Issue 29's image update as the owner does it in the console (Debian's Chromium), on the platform as
// `npm start` runs it, through the real edge, with the minimal gateway image and AGENT_IMAGES_ALLOWED
// naming a good image (the minimal one under a tag of this run) and one that cannot start: the
// update to the broken one says it failed and the previous image was restored, and that image still
// runs; the update to the good one shows it on the page, and the container runs it.
t.setTimeout(900_000);

const MINIMAL = 'localhost/agentyard-gateway-minimal:1';
const BROKEN = 'localhost/agentyard-no-such-image:1';

t.test(
  'the owner updates the image from the console: a broken one is rolled back, a good one runs',
  { skip: noBrowser || noAgentContainers },
  async (t) => {
    const { own, docker, removeOurs } = runContainers();
    const tag = `update-${randomBytes(4).toString('hex')}`;
    const good = `localhost/agentyard-gateway-minimal:${tag}`;
    await docker.getImage(MINIMAL).tag({ repo: 'localhost/agentyard-gateway-minimal', tag });
    const mailbox = await startMailServer(t);
    const platform = await startWholePlatform(
      {
        RUNTIME_INSTANCE: own,
        AGENT_IMAGE: MINIMAL,
        AGENT_IMAGES_ALLOWED: `${good},${BROKEN}`,
        AGENT_PORT_RANGE: '31600-31699',
        AGENT_READY_TIMEOUT_MS: '60000',
        SMTP_URL: mailbox.url,
        BILLING_PROVIDER: 'local',
      },
      { listenTimeoutMs: 180_000 },
    );
    t.teardown(async () => {
      await platform.stop();
      await removeOurs();
      // After the containers: an image a container still uses is not removed.
      await docker
        .getImage(good)
        .remove()
        .catch(() => undefined);
    });

    const web = new WebClient(platform.webUrl, platform.env.PUBLIC_BASE_URL!);
    const email = uniqueEmail('update-console');
    const password = 'an image update password';
    t.equal((await registerAndVerify(web, mailbox, email, password)).verified, 200, 'signed up and verified');
    t.equal(await payAtLocalCheckout(web, 'solo'), 303, 'subscribed at the development checkout');
    const provisioned = await web.request('POST', '/api/agents/provision', { name: 'Updatable' });
    t.equal(provisioned.status, 201, 'provisioning accepted');
    const id = ((await provisioned.json()) as { agent: { id: string } }).agent.id;
    const status = async () => {
      const res = await web.request('GET', `/api/agents/${id}`);
      return res.status === 200
        ? ((await res.json()) as { agent: { status: string } }).agent.status
        : `HTTP ${res.status}`;
    };
    t.equal(
      await observe(status, (s) => !['pending', 'provisioning', 'deploying', 'HTTP 429'].includes(s), {
        everyMs: 1000,
        deadlineMs: 240_000,
        what: 'the agent leaving provisioning',
      }),
      'running',
    );

    /** The image of the agent's running container, as the engine says. */
    const runningImage = async () => {
      const list = await docker.listContainers({
        filters: { label: [`${LABELS.agentId}=${id}`, `${LABELS.instance}=${own}`] },
      });
      t.equal(list.length, 1, 'one running container');
      return (await docker.getContainer(list[0]!.Id).inspect()).Config.Image;
    };
    t.equal(await runningImage(), MINIMAL, 'provisioned on the default image');
    const health = (await (
      await fetch(`${platform.backendUrl}/health`, { signal: AbortSignal.timeout(10_000) })
    ).json()) as Record<string, unknown>;
    t.same(
      { docker: health.docker, provider: health.provider },
      { docker: 'available', provider: 'docker' },
      "the backend /health says the agents service's engine answers",
    );

    const browser = await launchBrowser(t);
    const context = await consoleContext(browser, {
      webUrl: platform.webUrl,
      publicBaseUrl: platform.env.PUBLIC_BASE_URL!,
    });
    const page = await context.newPage();
    const refusals = watchPolicy(page);
    await signIn(page, email, password);
    await page.goto(`/agents/${id}`);
    await page.getByRole('heading', { name: 'Updatable', level: 1 }).waitFor();
    const about = page.getByRole('region', { name: 'About' });
    const lifecycle = page.getByRole('region', { name: 'Start, stop, repair and delete' });
    await about.getByText(MINIMAL, { exact: true }).waitFor();
    t.pass('the details name the image it runs');

    /** Asks for an update to `image` as the owner does: the button, the image chosen, confirmed. */
    const updateTo = async (image: string) => {
      await lifecycle.getByRole('button', { name: 'Update image', exact: true }).click();
      const dialog = page.getByRole('alertdialog');
      await dialog.getByLabel('Image').selectOption(image);
      await dialog.getByRole('button', { name: 'Update image', exact: true }).click();
    };

    // 1. The choice: every allowed image, the current one marked.
    await lifecycle.getByRole('button', { name: 'Update image', exact: true }).click();
    const choices = page.getByRole('alertdialog').getByLabel('Image');
    t.same(
      await choices.locator('option').allTextContents(),
      [`${MINIMAL} (current)`, good, BROKEN],
      'the allowed images, the current one marked',
    );
    const check = await checkPage(page, 'agent-update-console', 'update-asks-which-image');
    t.same(check.violations, [], `the question: no serious or critical axe violation (${check.screenshot})`);
    await page.getByRole('alertdialog').getByRole('button', { name: 'Cancel' }).click();

    // 2. A broken image: the page says the update failed and the previous image was restored; it still runs.
    await updateTo(BROKEN);
    const failed = lifecycle.getByRole('alert').filter({ hasText: 'Update image failed' });
    await failed.waitFor({ timeout: 240_000 });
    t.match(await failed.textContent(), /previous image was restored/, 'the failure in the event’s words');
    t.match(
      await failed.textContent(),
      new RegExp(`It runs ${MINIMAL.replace(/[.:]/g, '\\$&')}`),
      'and which image runs',
    );
    t.equal(await runningImage(), MINIMAL, 'rollback: the previous image runs');
    t.ok(await about.getByText(MINIMAL, { exact: true }).isVisible(), 'the details still name it');
    await checkPage(page, 'agent-update-console', 'update-rolled-back');

    // 3. A good image: done, the details name it, and the container runs it.
    await updateTo(good);
    await lifecycle.getByRole('status').filter({ hasText: 'Update image: done.' }).waitFor({ timeout: 240_000 });
    await about.getByText(good, { exact: true }).waitFor();
    t.pass('the details name the new image');
    t.equal(await runningImage(), good, 'update: the new image runs');
    t.equal(await status(), 'running');
    const done = await checkPage(page, 'agent-update-console', 'update-done');
    t.same(done.violations, [], `after the update: no serious or critical axe violation (${done.screenshot})`);
    t.same(refusals, [], 'no Content-Security-Policy refusal or page error');
    await context.close();
  },
);
