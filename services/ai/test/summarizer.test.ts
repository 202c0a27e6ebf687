import t from 'tap';
import { once } from 'node:events';
import { createUserRow, identityHeaders, startPageServer, systemDb } from '@agentyard/testing';
import { loadAiConfig } from '../src/config.ts';
import { activeSubscriptionRow, build } from './helper.ts';
import { startLocalProviders } from './providers.ts';

// The summarizer through the AI service: a real page server on loopback, reached by its test host
// name; the summary from a local model server under the caller's plan and budget.
const providers = await startLocalProviders(t);
const pages = await startPageServer(t);
const app = await build(t, {
  ...providers.env,
  PAGE_FETCH_TEST_HOSTS: pages.host,
  PLAN_MONTHLY_ALLOWANCE_USD: 'solo:5,collective:15,label:40,network:150',
});
if (!app.callerLookups.cached) await once(app.callerLookups.events, 'listening');

const signedIn = async (plan?: string) => {
  const user = await createUserRow();
  if (plan) await activeSubscriptionRow(user.id, plan);
  return { ...user, headers: identityHeaders({ userId: user.id, email: user.email }) };
};
const post = (url: string, headers: Record<string, string>, payload: object) =>
  app.inject({ method: 'POST', url, headers, payload });

t.test(
  'a page is read: title, description, headings, paragraphs and its words, scripts and styles left out',
  async (t) => {
    const user = await signedIn();
    const res = await post('/api/summarize', user.headers, { url: `${pages.origin}/moved` });
    t.equal(res.statusCode, 200, res.body);
    const page = res.json();
    t.match(page, {
      url: `${pages.origin}/article`,
      title: 'Quince preserves',
      description: 'How to make quince jelly and membrillo.',
      headings: [
        { level: 1, text: 'Quince preserves' },
        { level: 2, text: /^Jelly$/ },
        { level: 2, text: /^Membrillo$/ },
      ],
      fetchedAt: String,
    });
    t.equal(page.paragraphs.length, 3);
    t.match(page.paragraphs[0], /^Quinces are hard and sour raw/);
    t.notOk(JSON.stringify(page).includes('not prose'), 'no script text');
    t.notOk(JSON.stringify(page).includes('color: red'), 'no style text');
    t.ok(page.wordCount > 50 && page.wordCount < 90, `the body's words (${page.wordCount})`);
    t.notOk('summary' in page, 'no summary unless asked');
  },
);

t.test('links, images and meta tags, made absolute; javascript: links left out', async (t) => {
  const user = await signedIn();
  const res = await post('/api/extract', user.headers, { url: `${pages.origin}/article` });
  t.equal(res.statusCode, 200, res.body);
  t.match(res.json(), {
    url: `${pages.origin}/article`,
    links: [
      { href: `${pages.origin}/membrillo`, text: 'Membrillo recipe' },
      { href: /^https:\/\/example\.org\/quinces$/, text: /^Elsewhere$/ },
    ],
    images: [{ src: `${pages.origin}/quince.jpg`, alt: 'A ripe quince' }],
    meta: { description: 'How to make quince jelly and membrillo.', 'og:title': 'Quince preserves' },
  });
  t.equal(res.json().links.length, 2);
});

t.test('a page that redirects to a private address is refused, and the private address is never asked', async (t) => {
  const user = await signedIn();
  const before = pages.requested.length;
  for (const path of ['/to-private', '/to-metadata']) {
    const res = await post('/api/summarize', user.headers, { url: `${pages.origin}${path}` });
    t.equal(res.statusCode, 400, path);
    t.match(res.json(), { error: /private address/, code: /^URL_REFUSED$/ });
  }
  t.same(pages.requested.slice(before), ['/to-private', '/to-metadata'], 'only the redirecting pages were requested');
  const direct = await post('/api/extract', user.headers, { url: 'http://127.0.0.1:9/' });
  t.has(direct.json(), { code: 'URL_REFUSED' });
  const notHtml = await post('/api/extract', user.headers, { url: `${pages.origin}/not-html` });
  t.equal(notHtml.statusCode, 415);
  t.has(notHtml.json(), { code: 'NOT_HTML' });
});

t.test(
  'summary:true: a short summary by the AI gateway, billed to the caller; without a plan 402 and no fetch',
  async (t) => {
    const user = await signedIn('solo');
    const res = await post('/api/summarize', user.headers, { url: `${pages.origin}/article`, summary: true });
    t.equal(res.statusCode, 200, res.body);
    t.match(res.json(), {
      title: 'Quince preserves',
      summary: 'Hello from the local provider',
      model: String,
      usage: { promptTokens: 17, completionTokens: 5, totalTokens: 22 },
    });
    const sent = providers.delivered.at(-1)!;
    t.match(JSON.stringify(sent.body), /Simmer chopped quinces/, "the model was given the page's text");
    t.match(
      sent,
      { path: /gemini/, body: { generationConfig: { maxOutputTokens: 400 } } },
      'a short answer was asked for (the plan picked a Gemini model)',
    );
    await app.usageWriter.flush();
    const rows = await systemDb()
      .selectFrom('usage_events')
      .select(['user_id', 'agent_id', 'cost_usd'])
      .where('user_id', '=', user.id)
      .execute();
    t.equal(rows.length, 1, 'one usage row, the summary');
    t.equal(rows[0]!.agent_id, null);

    const planless = await signedIn();
    const before = pages.requested.length;
    const refused = await post('/api/summarize', planless.headers, { url: `${pages.origin}/article`, summary: true });
    t.equal(refused.statusCode, 402);
    t.has(refused.json(), { code: 'SUBSCRIPTION_REQUIRED' });
    t.equal(pages.requested.length, before, 'the page was not fetched');
  },
);

t.test('signed out: 401', async (t) => {
  const res = await post('/api/summarize', identityHeaders(), { url: `${pages.origin}/article` });
  t.equal(res.statusCode, 401);
});

t.test('the loopback allowance: names under .test only, and never in production', async (t) => {
  t.throws(
    () => loadAiConfig({ ...process.env, PAGE_FETCH_TEST_HOSTS: 'example.com' }),
    /PAGE_FETCH_TEST_HOSTS: each name must end in \.test/,
  );
  t.throws(
    () => loadAiConfig({ ...process.env, NODE_ENV: 'production', PAGE_FETCH_TEST_HOSTS: 'pages.test' }),
    /PAGE_FETCH_TEST_HOSTS: lets the page fetcher reach loopback/,
  );
  t.same(
    loadAiConfig({ ...process.env, PAGE_FETCH_TEST_HOSTS: 'pages.test, other.pages.test' }).PAGE_FETCH_TEST_HOSTS,
    'pages.test, other.pages.test',
  );
});
