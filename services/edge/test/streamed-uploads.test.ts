import t, { type Test } from 'tap';
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import {
  createServer,
  request as httpRequest,
  type ClientRequest,
  type IncomingMessage,
  type RequestListener,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { hashToken, randomToken } from '@agentyard/crypto';
import { IDENTITY_HEADER, verifyIdentity } from '@agentyard/identity';
import { agentWorkspaceRoutes, LARGEST_UPLOAD_BYTES, PLANS, route, workspaceLimitsOf } from '@agentyard/proto-schemas';
import { createUserRow, systemDb } from '@agentyard/testing';
import { buildEdge } from './helper.ts';

// Uploads through the edge: a route whose spec streams its body is relayed as the bytes arrive, up
// to its ceiling, while every other route still reads its body whole up to BODY_LIMIT_BYTES.
const MB = 1024 ** 2;
const CEILING = 6 * MB;
const routes = [
  route({
    method: 'POST',
    url: '/upload',
    service: 'agents',
    surfaces: ['web'],
    auth: 'user',
    rateLimit: 'web-files',
    streamedBody: { maxBytes: CEILING },
    summary: 'upload',
    schema: { response: {} },
  }),
  route({
    method: ['GET', 'POST'],
    url: '/buffered',
    service: 'agents',
    surfaces: ['web'],
    auth: 'user',
    summary: 'buffered',
    schema: { response: {} },
  }),
];

/** A service written here over plain node:http, answering as each test needs. */
async function startService(t: Test, handler: RequestListener): Promise<string> {
  const server = createServer(handler);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function edgeBefore(t: Test, service: string, specs = routes): Promise<string> {
  const edge = await buildEdge(
    t,
    'web',
    service,
    { QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}-uploads-${randomToken(4)}` },
    specs,
  );
  await edge.listen({ host: '127.0.0.1', port: 0 });
  return `http://127.0.0.1:${(edge.server.address() as AddressInfo).port}`;
}

async function signedIn() {
  const user = await createUserRow();
  const token = randomToken();
  await systemDb()
    .insertInto('sessions')
    .values({ user_id: user.id, token_hash: hashToken(token), expires_at: new Date(Date.now() + 3600_000) })
    .execute();
  return { user, cookie: `agentyard-session=${token}` };
}

/** What a service read of one request: its bytes, in how many chunks, and whether it arrived whole. */
async function readRequest(req: IncomingMessage) {
  const hash = createHash('sha256');
  let bytes = 0;
  let chunks = 0;
  req.on('data', (chunk: Buffer) => {
    bytes += chunk.length;
    chunks += 1;
    hash.update(chunk);
  });
  req.on('error', () => undefined); // 'aborted': `complete` tells
  await closeOf(req);
  return { bytes, chunks, sha256: hash.digest('hex'), complete: req.complete };
}

/** Resolves when `emitter` closes, whatever error came first (events.once would reject on it). */
const closeOf = (emitter: IncomingMessage | ClientRequest) =>
  new Promise<void>((resolve) => emitter.once('close', () => resolve()));

const readAll = async (res: IncomingMessage) => {
  let text = '';
  for await (const chunk of res) text += chunk;
  return text;
};

/**
 * A client's upload: `next(bytes)` writes that many more random bytes as fast as the connection
 * takes them, and stops early once the answer has come or the connection is gone.
 */
function startUpload(url: string, headers: Record<string, string | number>) {
  const req: ClientRequest = httpRequest(url, {
    method: 'POST',
    headers: { 'content-type': 'application/octet-stream', ...headers },
  });
  const hash = createHash('sha256');
  const errors: Error[] = [];
  req.on('error', (error) => errors.push(error)); // EPIPE/ECONNRESET once the edge has closed a refused upload
  const closed = closeOf(req);
  const response = Promise.race([
    new Promise<IncomingMessage>((resolve) => req.once('response', resolve)),
    closed.then(() => undefined),
  ]);
  let answered = false;
  void response.then(() => {
    answered = true;
  });
  let sent = 0;
  return {
    req,
    response,
    closed,
    errors,
    get sent() {
      return sent;
    },
    sha256: () => hash.digest('hex'),
    async next(bytes: number) {
      for (let left = bytes; left > 0 && !answered && !req.destroyed; ) {
        const piece = randomBytes(Math.min(64 * 1024, left));
        left -= piece.length;
        sent += piece.length;
        hash.update(piece);
        if (!req.write(piece))
          await Promise.race([new Promise((resolve) => req.once('drain', resolve)), response, closed]);
        else await new Promise(setImmediate); // lets the answer in between writes the socket took at once
      }
    },
    end: () => req.end(),
  };
}

t.test('a 5 MB upload streams through: the service reads it while the client still holds the rest', async (t) => {
  const firstChunk = Promise.withResolvers<void>();
  const service = await startService(t, async (req, res) => {
    req.once('data', () => firstChunk.resolve());
    const body = await readRequest(req);
    res.writeHead(201, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ ...body, headers: req.headers }));
  });
  const edge = await edgeBefore(t, service);
  const { user, cookie } = await signedIn();
  const upload = startUpload(`${edge}/upload`, { cookie });
  await upload.next(1.5 * MB); // past BODY_LIMIT_BYTES: an edge reading it whole would refuse it here
  const early = await Promise.race([firstChunk.promise.then(() => undefined), upload.response]);
  t.equal(
    early,
    undefined,
    `the service has its first chunk while the client holds the rest (answered first: ${early?.statusCode})`,
  );
  await upload.next(5 * MB - upload.sent);
  upload.end();
  const res = (await upload.response)!;
  t.equal(res.statusCode, 201);
  const seen = JSON.parse(await readAll(res));
  t.equal(seen.bytes, 5 * MB, 'every byte arrived');
  t.equal(seen.sha256, upload.sha256(), 'byte for byte');
  t.ok(seen.chunks > 1, `in chunks as they came (${seen.chunks})`);
  t.equal(
    seen.headers['transfer-encoding'],
    'chunked',
    'relayed as it arrives, not with a length the edge would have to read first',
  );
  t.notOk(seen.headers.cookie, 'no cookie forwarded');
  t.has(
    verifyIdentity(seen.headers[IDENTITY_HEADER], process.env.IDENTITY_SECRET!),
    { surface: 'web', auth: 'session', userId: user.id },
    'the caller resolved and signed, as on every route',
  );
  t.ok(res.headers['x-request-id'], 'the request id');
  t.equal(res.headers['ratelimit-limit'], '60', "counted against the route's scope (web-files)");
});

t.test("the edge's hooks hold on a streamed route: CSRF, and no session is no user", async (t) => {
  let calls = 0;
  const service = await startService(t, async (req, res) => {
    calls += 1;
    const body = await readRequest(req);
    res.end(
      JSON.stringify({
        identity: verifyIdentity(req.headers[IDENTITY_HEADER] as string, process.env.IDENTITY_SECRET!),
        bytes: body.bytes,
      }),
    );
  });
  const edge = await edgeBefore(t, service);
  const { cookie } = await signedIn();
  const crossSite = startUpload(`${edge}/upload`, {
    cookie,
    origin: 'https://elsewhere.example',
    'sec-fetch-site': 'cross-site',
  });
  await crossSite.next(64 * 1024);
  crossSite.end();
  const refused = (await crossSite.response)!;
  t.equal(refused.statusCode, 403);
  t.has(JSON.parse(await readAll(refused)), { code: 'CSRF' });
  const anonymous = startUpload(`${edge}/upload`, {});
  await anonymous.next(64 * 1024);
  anonymous.end();
  const res = (await anonymous.response)!;
  t.has(
    JSON.parse(await readAll(res)),
    { identity: { auth: 'none', userId: null }, bytes: 64 * 1024 },
    'a cookie-less caller reaches the service as nobody',
  );
  t.equal(calls, 1, 'the cross-site upload never reached the service');
});

t.test("a body past the ceiling is 413, the service gets nothing past it, and the client's upload ends", async (t) => {
  const received = Promise.withResolvers<Awaited<ReturnType<typeof readRequest>>>();
  const service = await startService(t, async (req) => received.resolve(await readRequest(req)));
  const edge = await edgeBefore(t, service);
  const { cookie } = await signedIn();
  const upload = startUpload(`${edge}/upload`, { cookie });
  await upload.next(CEILING + 64 * MB);
  const res = await upload.response;
  t.ok(res, 'answered before the connection went');
  t.equal(res!.statusCode, 413);
  t.equal(res!.headers.connection, 'close', 'the rest of the body is not read');
  t.same(JSON.parse(await readAll(res!)), { error: 'Request body too large' });
  t.ok(
    upload.sent > CEILING && upload.sent < CEILING + 64 * MB,
    `the client had its answer while still sending (${upload.sent} bytes sent)`,
  );
  await upload.closed;
  const seen = await received.promise;
  t.ok(seen.bytes > 0 && seen.bytes <= CEILING, `the service got ${seen.bytes} bytes, none past the ceiling`);
  t.notOk(seen.complete, "the service's request was aborted, not ended as if whole");

  let calls = 0;
  const counting = await startService(t, (req, res) => {
    calls += 1;
    req.resume();
    res.end();
  });
  const declared = startUpload(`${await edgeBefore(t, counting)}/upload`, { cookie, 'content-length': CEILING + 1 });
  await declared.next(64 * 1024);
  const answer = (await declared.response)!;
  t.equal(answer.statusCode, 413, 'a declared length past the ceiling is refused before any byte is read');
  t.same(JSON.parse(await readAll(answer)), { error: 'Request body too large' });
  await declared.closed;
  t.equal(calls, 0, 'nothing reached the service');
});

t.test("a service that refuses an upload early (its own limit) is relayed, and the client's upload ends", async (t) => {
  const refusal = {
    error: 'File too large: at most 1048576 bytes per file on your plan',
    code: 'FILE_TOO_LARGE',
    limit: MB,
  };
  const service = await startService(t, async (req, res) => {
    if (req.url === '/buffered') return res.end('{"ok":true}');
    let bytes = 0;
    // As the agents service does: reads up to its limit, answers, reads no more.
    for await (const chunk of req.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer>) {
      bytes += chunk.length;
      if (bytes > MB) break;
    }
    const body = JSON.stringify(refusal);
    res.writeHead(413, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
  // A ceiling far above what the kernel's socket buffers hold, so only the answer can stop the client.
  const largeUpload = route({ ...routes[0]!, streamedBody: { maxBytes: 256 * MB } });
  const edge = await edgeBefore(t, service, [largeUpload, routes[1]!]);
  const { cookie } = await signedIn();
  const upload = startUpload(`${edge}/upload`, { cookie });
  await upload.next(128 * MB);
  const res = (await upload.response)!;
  t.equal(res.statusCode, 413);
  t.same(JSON.parse(await readAll(res)), refusal, "the service's answer, as it gave it");
  t.ok(upload.sent < 128 * MB, `the client stopped when answered (${upload.sent} of ${128 * MB} bytes sent)`);
  await upload.closed;
  t.pass("the client's upload ended without hanging");
  const after = await fetch(`${edge}/buffered`, { headers: { cookie } });
  t.equal(after.status, 200, 'the edge still reaches the service');
});

t.test("a client that leaves mid-upload aborts the service's request", async (t) => {
  const firstChunk = Promise.withResolvers<void>();
  const received = Promise.withResolvers<Awaited<ReturnType<typeof readRequest>>>();
  const service = await startService(t, async (req) => {
    req.once('data', () => firstChunk.resolve());
    received.resolve(await readRequest(req));
  });
  const edge = await edgeBefore(t, service);
  const { cookie } = await signedIn();
  const upload = startUpload(`${edge}/upload`, { cookie });
  await upload.next(256 * 1024);
  await firstChunk.promise;
  upload.req.destroy();
  const seen = await received.promise;
  t.notOk(seen.complete, "the service's request ended unfinished");
  t.ok(seen.bytes <= 256 * 1024);
});

t.test('every other route still reads its body whole and refuses it past 1 MB', async (t) => {
  let calls = 0;
  const service = await startService(t, async (req, res) => {
    calls += 1;
    const body = await readRequest(req);
    res.end(JSON.stringify({ bytes: body.bytes, length: req.headers['content-length'] ?? null }));
  });
  const edge = await edgeBefore(t, service);
  const { cookie } = await signedIn();
  const chunked = startUpload(`${edge}/buffered`, { cookie });
  await chunked.next(2 * MB);
  const refused = (await chunked.response)!;
  t.equal(refused.statusCode, 413, 'a chunked body past 1 MB');
  t.match(JSON.parse(await readAll(refused)), { error: /too large/ });
  const declared = await fetch(`${edge}/buffered`, {
    method: 'POST',
    headers: { cookie },
    body: new Uint8Array(MB + 1),
  });
  t.equal(declared.status, 413, 'a declared length past 1 MB');
  await declared.arrayBuffer();
  const fine = startUpload(`${edge}/buffered`, { cookie });
  await fine.next(MB);
  fine.end();
  t.same(
    JSON.parse(await readAll((await fine.response)!)),
    { bytes: MB, length: String(MB) },
    'under the limit: read whole, sent on with its length',
  );
  t.equal(calls, 1, 'only the body under the limit reached the service');
});

t.test("POST /api/files streams up to the largest plan's file size, its other methods stay buffered", async (t) => {
  t.equal(
    LARGEST_UPLOAD_BYTES,
    Math.max(...PLANS.map((plan) => workspaceLimitsOf(plan).fileBytes)),
    "the ceiling is the largest plan's size per file",
  );
  t.equal(agentWorkspaceRoutes.uploadFile.streamedBody?.maxBytes, LARGEST_UPLOAD_BYTES);
  const service = await startService(t, async (req, res) => {
    const body = await readRequest(req);
    res.end(JSON.stringify({ method: req.method, bytes: body.bytes }));
  });
  const edge = await edgeBefore(t, service, [
    agentWorkspaceRoutes.listFiles,
    agentWorkspaceRoutes.uploadFile,
    agentWorkspaceRoutes.deleteFile,
  ]);
  const { cookie } = await signedIn();
  const url = `${edge}/api/files?agentId=${crypto.randomUUID()}&path=uploads/a.bin`;
  const upload = await fetch(url, { method: 'POST', headers: { cookie }, body: new Uint8Array(2 * MB) });
  t.same(await upload.json(), { method: 'POST', bytes: 2 * MB }, 'an upload past 1 MB goes through');
  const tooLarge = startUpload(url, { cookie, 'content-length': LARGEST_UPLOAD_BYTES + 1 });
  await tooLarge.next(64 * 1024);
  const refused = (await tooLarge.response)!;
  t.equal(refused.statusCode, 413, 'one past the ceiling does not');
  await readAll(refused);
  const deleted = await fetch(url, {
    method: 'DELETE',
    headers: { cookie, 'content-type': 'application/octet-stream' },
    body: new Uint8Array(MB + 1),
  });
  t.equal(deleted.status, 413, 'another method of the url keeps the 1 MB limit');
});
