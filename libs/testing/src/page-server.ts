// Web pages for the summarizer's tests: a real HTTP server on loopback, reached by the page
// fetcher through its test host name (PAGE_FETCH_TEST_HOSTS), never by its address.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Test } from 'tap';

export interface PageServer {
  /** `http://<host>:<port>`: the test host name the fetcher is told to let through. */
  origin: string;
  /** The host name to put in PAGE_FETCH_TEST_HOSTS. */
  host: string;
  /** Paths requested so far (a refused redirect target never shows up here). */
  requested: string[];
}

/** A page about quinces: title, description, headings, paragraphs, links, images and meta tags. */
export const ARTICLE_HTML = `<!doctype html>
<html lang="en"><head>
<title>Quince preserves</title>
<meta name="description" content="How to make quince jelly and membrillo.">
<meta property="og:title" content="Quince preserves">
<style>body { color: red }</style>
</head><body>
<h1>Quince preserves</h1>
<p>Quinces are hard and sour raw, but turn pink and fragrant when cooked slowly with sugar.</p>
<h2>Jelly</h2>
<p>Simmer chopped quinces in water for an hour, strain the juice overnight, then boil it with sugar until it sets.</p>
<h2>Membrillo</h2>
<p>Cook the pulp with sugar until it is thick and deep red, then set it in a tray.</p>
<script>document.write('not prose')</script>
<a href="/membrillo">Membrillo recipe</a> <a href="https://example.org/quinces">Elsewhere</a> <a href="javascript:alert(1)">Nothing</a>
<img src="/quince.jpg" alt="A ripe quince">
</body></html>`;

/**
 * Serves `/article` (HTML), `/not-html` (JSON), and redirects: `/to-private` to the server's own
 * loopback address (which the fetcher must refuse), `/to-metadata` to the cloud metadata address,
 * `/moved` to `/article` on the test host.
 */
export async function startPageServer(t: Test, host = 'pages.test'): Promise<PageServer> {
  const requested: string[] = [];
  let port = 0;
  const server = createServer((request, response) => {
    const path = request.url ?? '/';
    requested.push(path);
    if (path === '/article')
      return response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(ARTICLE_HTML);
    if (path === '/not-html')
      return response.writeHead(200, { 'content-type': 'application/json' }).end('{"quince":true}');
    if (path === '/to-private') return response.writeHead(302, { location: `http://127.0.0.1:${port}/article` }).end();
    if (path === '/to-metadata')
      return response.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' }).end();
    if (path === '/moved') return response.writeHead(301, { location: '/article' }).end();
    response.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { origin: `http://${host}:${port}`, host, requested };
}
