import t from 'tap';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { guardedFetch, GuardedFetchError, isPublicAddress, type GuardedFetchOptions } from '../src/guarded-fetch.ts';

// The page fetcher against real local servers. They listen on loopback, which the fetcher refuses;
// the name `pages.test` is its test allowance (loopback for that name only), so every other way of
// reaching loopback or a private range (a literal address, `localhost`, a redirect) stays refused.

type Handler = (request: IncomingMessage, response: ServerResponse) => void;
const routes = new Map<string, Handler>();
const held: ServerResponse[] = [];
const server = createServer((request, response) => {
  const handler = routes.get(request.url ?? '');
  if (!handler) return response.writeHead(404).end();
  handler(request, response);
});
server.listen(0, '127.0.0.1');
await once(server, 'listening');
const port = (server.address() as AddressInfo).port;
t.teardown(() => {
  for (const response of held) response.destroy();
  server.closeAllConnections();
  server.close();
});

const page =
  (html: string, type = 'text/html; charset=utf-8'): Handler =>
  (_request, response) =>
    response.writeHead(200, { 'content-type': type }).end(html);
const redirect =
  (location: string, status = 302): Handler =>
  (_request, response) =>
    response.writeHead(status, { location }).end();
const host = `http://pages.test:${port}`;
const options: GuardedFetchOptions = {
  timeoutMs: 2000,
  maxBytes: 64 * 1024,
  maxRedirects: 3,
  contentTypes: ['text/html'],
  loopbackTestHosts: new Set(['pages.test']),
};
const refusal = async (url: string, opts: GuardedFetchOptions = options) => {
  try {
    await guardedFetch(url, opts);
    return 'fetched';
  } catch (error) {
    return error instanceof GuardedFetchError ? error.reason : `unexpected ${(error as Error).message}`;
  }
};

routes.set('/hello', page('<h1>Hello</h1>'));
routes.set('/hops', redirect('/hop-2', 301));
routes.set('/hop-2', redirect(`${host}/hello`, 307));
routes.set('/to-loopback', redirect(`http://127.0.0.1:${port}/hello`));
routes.set('/to-localhost', redirect(`http://localhost:${port}/hello`));
routes.set('/to-metadata', redirect('http://169.254.169.254/latest/meta-data/'));
routes.set('/to-private', redirect('http://10.1.2.3/'));
routes.set('/to-mapped', redirect(`http://[::ffff:127.0.0.1]:${port}/hello`));
routes.set('/to-file', redirect('file:///etc/passwd'));
routes.set('/loop', redirect('/loop'));
routes.set('/json', page('{"a":1}', 'application/json'));
routes.set('/big-declared', page(`<p>${'x'.repeat(70 * 1024)}</p>`));
routes.set('/big-chunked', (_request, response) => {
  response.writeHead(200, { 'content-type': 'text/html' });
  for (let i = 0; i < 70; i++) response.write(`<p>${'y'.repeat(1024)}</p>`);
  response.end();
});
routes.set('/silent', (_request, response) => held.push(response));

t.test('a page on the test host is fetched, through redirects, with its final URL', async (t) => {
  const document = await guardedFetch(`${host}/hops`, options);
  t.same(document, { url: `${host}/hello`, contentType: 'text/html', body: '<h1>Hello</h1>' });
});

t.test(
  'loopback, private, link-local (metadata) and mapped addresses are refused, directly and after a redirect',
  async (t) => {
    t.equal(await refusal(`http://127.0.0.1:${port}/hello`), 'address', 'a literal loopback address');
    t.equal(await refusal(`http://[::1]:${port}/hello`), 'address', 'IPv6 loopback');
    t.equal(await refusal(`http://localhost:${port}/hello`), 'address', 'a name that resolves to loopback');
    t.equal(await refusal('http://169.254.169.254/latest/meta-data/'), 'address', 'the cloud metadata address');
    for (const path of ['/to-loopback', '/to-localhost', '/to-metadata', '/to-private', '/to-mapped'])
      t.equal(await refusal(`${host}${path}`), 'address', `redirect ${path}`);
  },
);

t.test('only http and https, without credentials', async (t) => {
  t.equal(await refusal('file:///etc/passwd'), 'scheme');
  t.equal(await refusal(`ftp://pages.test:${port}/`), 'scheme');
  t.equal(await refusal(`http://user:secret@pages.test:${port}/hello`), 'scheme');
  t.equal(await refusal(`${host}/to-file`), 'scheme', 'a redirect to file: is refused too');
  t.equal(await refusal('not a url'), 'scheme');
});

t.test('redirects are bounded, HTML only, size capped, and a silent server times out', async (t) => {
  t.equal(await refusal(`${host}/loop`), 'redirects');
  t.equal(await refusal(`${host}/json`), 'type');
  t.equal(await refusal(`${host}/big-declared`), 'size', 'a declared length over the cap');
  t.equal(await refusal(`${host}/big-chunked`), 'size', 'a chunked body that passes the cap');
  t.equal(await refusal(`${host}/silent`, { ...options, timeoutMs: 300 }), 'timeout');
  t.equal(await refusal(`${host}/missing`), 'status');
});

t.test('without the test allowance the test host is an ordinary name', async (t) => {
  t.equal(
    await refusal(`${host}/hello`, { ...options, loopbackTestHosts: new Set() }),
    'unreachable',
    'pages.test does not resolve',
  );
});

t.test('isPublicAddress: public unicast only', async (t) => {
  for (const address of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111']) t.ok(isPublicAddress(address), address);
  for (const address of [
    '127.0.0.1',
    '10.0.0.1',
    '172.16.5.4',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '::1',
    'fe80::1',
    'fd00::1',
    '::ffff:10.0.0.1',
    '224.0.0.1',
    'nope',
  ])
    t.notOk(isPublicAddress(address), address);
});
