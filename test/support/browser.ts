import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { repoRoot } from '@agentyard/config';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import type { Test } from 'tap';

/** Where screenshots of the console's pages go (git-ignored), one directory per test file. */
export const ARTIFACTS = join(repoRoot, 'test-artifacts', 'console');

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** Why the browser tests cannot run here, or false: they need Debian's Chromium (npm test installs it: infra/browser/up.sh). */
export const noBrowser: string | false = process.env.CHROMIUM_PATH
  ? false
  : 'no Chromium (infra/browser/up.sh could not install it)';

/**
 * Debian's Chromium, headless with an empty profile, as root (--no-sandbox) and without background
 * networking (this machine refuses outside hosts, and a test must not depend on them). Closed with the test.
 */
export async function launchBrowser(t: Test): Promise<Browser> {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH!,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-default-apps',
    ],
  });
  t.teardown(() => browser.close());
  return browser;
}

/**
 * A browser context that reaches the platform at `publicBaseUrl` (what its mails and redirects name)
 * while the test's edge listens on another port: every request to that origin goes to `webUrl`.
 */
export async function consoleContext(
  browser: Browser,
  {
    webUrl,
    publicBaseUrl,
    width = 1280,
    height = 900,
  }: { webUrl: string; publicBaseUrl: string; width?: number; height?: number },
): Promise<BrowserContext> {
  // A page the route below answers (route.fulfill) has no network address, so Chromium counts it as
  // public; the event streams it lets go on to the edge's loopback port are then local network
  // requests, which Chromium refuses unless the page may make them.
  const context = await browser.newContext({
    viewport: { width, height },
    baseURL: publicBaseUrl,
    permissions: ['clipboard-read', 'clipboard-write', 'local-network-access'],
  });
  let closed = false;
  context.on('close', () => {
    closed = true;
  });
  const from = new URL(publicBaseUrl).origin;
  const to = new URL(webUrl).origin;
  // Answered from the edge as if that origin had answered (redirects included, for the browser to follow),
  // so the page stays on the public origin, under its policy and cookies.
  if (from !== to) {
    await context.route(
      (url) => url.origin === from,
      async (route) => {
        const url = to + route.request().url().slice(from.length);
        // A Server-Sent Events stream never ends: route.fetch would wait for its end, so it goes on unbuffered.
        if (route.request().headers().accept === 'text/event-stream') return route.continue({ url });
        try {
          const response = await route.fetch({ url, maxRedirects: 0, timeout: 60_000 });
          await route.fulfill({ response });
        } catch (error) {
          // A request the page still had in flight when the test closed its browser ends with it.
          if (closed || !browser.isConnected()) return;
          throw error;
        }
      },
    );
  }
  return context;
}

/** Signs in on the console's own form, as a person does, and waits until it has left the sign-in page. */
export async function signIn(page: Page, email: string, password: string): Promise<void> {
  await page.goto('/login');
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL((url) => !url.pathname.startsWith('/login'));
}

/** What the page's console said about the Content-Security-Policy (a refused script or style), kept for the test to assert none. */
export function watchPolicy(page: Page): string[] {
  const refusals: string[] = [];
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) refusals.push(message.text());
  });
  page.on('pageerror', (error) => refusals.push(`page error: ${error.message}`));
  return refusals;
}

export interface PageCheck {
  violations: { id: string; impact: string | null; help: string; nodes: number }[];
  screenshot: string;
}

/**
 * axe-core's serious and critical accessibility violations of the page as it is now, and a
 * full-page screenshot under test-artifacts/console/<file>/<name>.png.
 */
export async function checkPage(page: Page, file: string, name: string): Promise<PageCheck> {
  await page.evaluate(axeSource);
  const result = await page.evaluate(async () => {
    const axe = (
      globalThis as unknown as {
        axe: {
          run(
            context: unknown,
            options: unknown,
          ): Promise<{ violations: { id: string; impact: string | null; help: string; nodes: unknown[] }[] }>;
        };
      }
    ).axe;
    return axe.run((globalThis as unknown as { document: unknown }).document, { resultTypes: ['violations'] });
  });
  const dir = join(ARTIFACTS, file);
  mkdirSync(dir, { recursive: true });
  const screenshot = join(dir, `${name}.png`);
  await page.screenshot({ path: screenshot, fullPage: true });
  const violations = result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.length }));
  return { violations, screenshot };
}
