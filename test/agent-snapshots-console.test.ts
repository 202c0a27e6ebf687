import t from 'tap';
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createQueues, QUEUES } from '@agentyard/queue';
import { SNAPSHOT_FORMAT, unpackAgentState } from '@agentyard/runtime';
import { startAgentJourney } from './support/agent-journey.ts';
import { checkPage, consoleContext, launchBrowser, noBrowser, watchPolicy, signIn } from './support/browser.ts';
import { noAgentContainers } from './support/containers.ts';

// Issue 30 as an owner meets it in the console (Debian's Chromium), through the real edge on the
// platform as `npm start` runs it, with the minimal gateway image (the snapshot flows need only its
// state disk): on the agent's Snapshots page a labelled snapshot is taken and seen pending, then
// ready with its size; the browser's download is that archive, whole; a restore (confirmed) takes
// away a file written after the snapshot; a clone is a new agent that runs with the snapshot's
// files; a delete (confirmed) takes it off the list. Plan quotas are fixed per plan (no setting
// makes one small), so the quota's refusal is not driven here: services/agents/test/e2e/agent-snapshot-schedule.test.ts.
t.setTimeout(900_000);

const MINIMAL = 'localhost/agentyard-gateway-minimal:1';
const LABEL = 'before the note';

/** A size as the console writes it (services/console/src/metrics.ts, `bytes`). */
const asShown = (value: number) => {
  const units = ['B', 'KB', 'MB', 'GB'];
  let amount = value;
  let unit = 0;
  while (amount >= 1024 && unit < units.length - 1) {
    amount /= 1024;
    unit += 1;
  }
  return `${unit === 0 ? amount : amount.toFixed(amount >= 100 ? 0 : 1)} ${units[unit]}`;
};

t.test(
  'an owner snapshots, downloads, restores, clones and deletes from the Snapshots page',
  { skip: noBrowser || noAgentContainers },
  async (t) => {
    // The browser talks to the edge itself, not through the routes of consoleContext: a route cannot answer a download.
    const journey = await startAgentJourney(
      t,
      { AGENT_IMAGE: MINIMAL, AGENT_PORT_RANGE: '31700-31799', AGENT_READY_TIMEOUT_MS: '60000' },
      { webAtPublicUrl: true },
    );
    const { platform } = journey;
    const { web, userId: owner, email, password } = await journey.subscriber('snapshots-console', 'collective');
    const agent = await journey.provision(web, owner, 'Keepsake');
    if (!t.equal(await agent.settled(), 'running', 'the agent runs')) return;
    const { id } = agent;

    /** The names in the agent's `uploads/` folder, through the Files API. */
    const uploads = async (agentId: string) => {
      const res = await web.request('GET', `/api/files?agentId=${agentId}&path=uploads`);
      return res.status === 200
        ? ((await res.json()) as { entries: { name: string }[] }).entries.map((e) => e.name).sort()
        : [`HTTP ${res.status}`];
    };
    const upload = async (path: string, content: string) => {
      const res = await web.request('POST', `/api/files?agentId=${id}&path=${path}`, content, {
        headers: { 'content-type': 'application/octet-stream' },
      });
      t.equal(res.status, 201, `${path} written into the workspace`);
    };
    // 2 MiB of random hex, about half of it left after gzip: the archive has a real size, and taking it is not instant.
    const kept = randomBytes(1024 * 1024).toString('hex');
    await upload('uploads/kept.txt', kept);

    type Listed = { id: string; label: string | null; reason: string; status: string; sizeBytes: number | null };
    const listed = async () =>
      ((await (await web.request('GET', `/api/agents/${id}/snapshots`)).json()) as { snapshots: Listed[] }).snapshots;

    const browser = await launchBrowser(t);
    const context = await consoleContext(browser, { webUrl: platform.webUrl, publicBaseUrl: platform.webUrl });
    t.equal(platform.env.PUBLIC_BASE_URL, platform.webUrl, 'the platform’s public origin is its web listener');
    const page = await context.newPage();
    const refusals = watchPolicy(page);
    const checked = async (name: string) => {
      const { violations, screenshot } = await checkPage(page, 'agent-snapshots-console', name);
      t.same(violations, [], `${name}: no serious or critical axe violation (${screenshot})`);
    };
    await signIn(page, email, password);
    await page.goto(`/agents/${id}/snapshots`);
    await page.getByText('No snapshot yet.', { exact: false }).waitFor();
    t.pass('the page says there is no snapshot yet');
    await checked('snapshots-empty');

    // 1. Taken with a label: pending, then ready with the archive's size. The lifecycle queue is
    // held meanwhile, so the page is seen with the snapshot pending however fast the worker is.
    const queues = createQueues({ redisUrl: platform.env.REDIS_URL!, prefix: platform.env.QUEUE_PREFIX! });
    t.teardown(() => queues.close());
    const lifecycle = queues.get(QUEUES.lifecycle);
    await lifecycle.pause();
    t.teardown(() => lifecycle.resume());
    await page.getByLabel('Label (optional)').fill(LABEL);
    await page.getByRole('button', { name: 'Take snapshot' }).click();
    const row = page.getByRole('row').filter({ hasText: LABEL });
    const cells = row.getByRole('cell');
    await cells.nth(4).getByText('Being taken…', { exact: true }).waitFor();
    t.equal(await cells.nth(3).textContent(), '—', 'pending: no size yet');
    t.equal(await cells.nth(2).textContent(), 'Taken by you');
    t.equal(await page.getByLabel('Label (optional)').inputValue(), '', 'the label field is emptied');
    await lifecycle.resume();
    await cells.nth(4).getByText('Ready', { exact: true }).waitFor({ timeout: 120_000 });
    const [snapshot] = (await listed()).filter((s) => s.label === LABEL);
    t.match(snapshot, { status: /^ready$/, reason: /^manual$/, sizeBytes: Number });
    const sizeBytes = snapshot!.sizeBytes!;
    t.ok(sizeBytes > 1024 * 1024, `its size holds the file: ${sizeBytes} bytes`);
    const shownSize = await cells.nth(3).textContent();
    t.equal(shownSize, asShown(sizeBytes), `the page shows its size: ${shownSize}`);
    t.match(
      await page.getByText(/^Your snapshots take/).textContent(),
      new RegExp(`^Your snapshots take ${asShown(sizeBytes).replace('.', '\\.')} of 10\\.0 GB\\. `),
      'and what it takes of the plan’s quota',
    );
    await checked('snapshot-ready');

    // 2. The browser's download: the archive whole, of the size shown, holding the file.
    const downloading = page.waitForEvent('download');
    await page.getByRole('link', { name: `Download ${LABEL}` }).click();
    const download = await downloading;
    const file = await download.path();
    t.match(download.suggestedFilename(), new RegExp(`^agent-${id}-snapshot-${snapshot!.id}\\.tar\\.gz$`));
    t.equal((await stat(file)).size, sizeBytes, 'the download is as large as the snapshot listed');
    const unpacked = await mkdtemp(join(tmpdir(), 'snapshot-download-'));
    t.teardown(() => rm(unpacked, { recursive: true, force: true }));
    // Unpacking checks the manifest, every entry and every SHA-256 against the archive's checksums.
    const manifest = await unpackAgentState(createReadStream(file), unpacked, { maxBytes: 100 * 1024 * 1024 });
    t.match(manifest, { format: SNAPSHOT_FORMAT, agentId: id, reason: 'manual', label: LABEL });
    t.equal(
      createHash('sha256')
        .update(await readFile(join(unpacked, 'workspace/uploads/kept.txt')))
        .digest('hex'),
      createHash('sha256').update(kept).digest('hex'),
      'it holds the workspace file, byte for byte',
    );

    // 3. A restore (confirmed) takes away what was written after the snapshot.
    await upload('uploads/after.txt', 'written after the snapshot\n');
    t.same(await uploads(id), ['after.txt', 'kept.txt'], 'both files before the restore');
    // One question at a time: a delete asked first gives way to the restore.
    await page.getByRole('button', { name: `Delete ${LABEL}` }).click();
    await page.getByRole('alertdialog').waitFor();
    await page.getByRole('button', { name: `Restore ${LABEL}` }).click();
    const asked = page.getByRole('alertdialog');
    t.equal(await asked.count(), 1, 'one question open');
    t.match(await asked.textContent(), /^Restore Keepsake to before the note\? /, 'the restore asks first');
    await checked('restore-asks');
    await asked.getByRole('button', { name: 'Restore agent' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: /^Restored\./ })
      .waitFor({ timeout: 240_000 });
    t.equal(await page.getByRole('alertdialog').count(), 0, 'the question is gone');
    await page
      .getByRole('row')
      .filter({ hasText: 'Before a restore' })
      .getByRole('cell', { name: 'Ready', exact: true })
      .waitFor();
    t.pass('the state it replaced is listed as a snapshot “Before a restore”');
    t.same(await uploads(id), ['kept.txt'], 'the file written after the snapshot is gone');
    t.equal(await agent.status(), 'running', 'the agent runs again');
    await page.getByRole('link', { name: 'Files', exact: true }).click();
    await page.getByRole('link', { name: 'Download kept.txt' }).waitFor();
    t.equal(await page.getByText('after.txt').count(), 0, 'the Files page lists only the snapshot’s file');
    await page.getByRole('link', { name: 'Snapshots', exact: true }).click();

    // 4. A clone: a new agent, running, with the snapshot's files.
    await page.getByRole('button', { name: `Clone ${LABEL}` }).click();
    await page.getByLabel("New agent's name").fill('Keepsake twin');
    await page.getByRole('button', { name: 'Create clone' }).click();
    await page.getByRole('heading', { name: 'Keepsake twin', level: 1 }).waitFor({ timeout: 120_000 });
    const cloneId = /\/agents\/([0-9a-f-]{36})$/.exec(page.url())?.[1];
    if (!t.ok(cloneId && cloneId !== id, `the page is the new agent's: ${page.url()}`)) return;
    journey.removeAtEnd(cloneId!, owner);
    await page.locator('.title-row').getByText('Running', { exact: true }).waitFor({ timeout: 240_000 });
    t.pass('the clone runs, as its page says');
    t.equal(
      (
        (await (await web.request('GET', `/api/agents/${cloneId}`)).json()) as {
          agent: { status: string };
        }
      ).agent.status,
      'running',
    );
    t.same(await uploads(cloneId!), ['kept.txt'], 'with the snapshot’s files');
    await checked('clone-running');

    // 5. A delete (confirmed): the list no longer has it.
    await page.goto(`/agents/${id}/snapshots`);
    await page.getByRole('button', { name: `Delete ${LABEL}` }).click();
    t.match(await page.getByRole('alertdialog').textContent(), /^Delete the snapshot before the note\? /);
    await page.getByRole('alertdialog').getByRole('button', { name: 'Delete snapshot' }).click();
    await row.waitFor({ state: 'detached' });
    t.pass('the row is gone');
    t.notOk(
      (await listed()).some((s) => s.id === snapshot!.id),
      'and the API lists it no more',
    );
    t.equal(
      (await web.request('GET', `/api/agents/${id}/snapshots/${snapshot!.id}/download`)).status,
      404,
      'its archive is not downloadable',
    );
    t.same(refusals, [], 'no Content-Security-Policy refusal or page error');
    await context.close();
  },
);
