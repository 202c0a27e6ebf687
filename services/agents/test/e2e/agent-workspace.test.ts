import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { openAgentSecret } from '@agentyard/agent-gateway';
import { hashToken, parseKeyring, randomToken } from '@agentyard/crypto';
import { workspaceLimitsOf } from '@agentyard/proto-schemas';
import { appDb, systemDb } from '@agentyard/testing';
import Docker from 'dockerode';
import t from 'tap';
import { buildApp as buildEdge } from '../../../edge/src/app.ts';
import { loadEdgeConfig } from '../../../edge/src/config.ts';
import { rateLimitRedis } from '../../../edge/src/plugins/rate-limits.ts';
import { sampleAgentMetrics } from '../../src/domain/telemetry/privileged/metrics-sampler.ts';
import { backend, execIn, startAgents, web } from '../agents-harness.ts';

// Logs, workspace files, metrics and status events of an agent running on the real engine (Podman's
// Docker API here) with the minimal gateway image: what the agent prints, what it sees on its disk,
// what the engine measures, each read back through the routes a user calls.
const MINIMAL = 'localhost/agentyard-gateway-minimal:1';
const WORKSPACE = '/home/node/.openclaw/workspace';
t.setTimeout(300_000);

/** An event's data: a log line or a status change, fields all strings (or null). */
type EventData = Record<string, string | null>;

/** Server-Sent Events of one response, read as they come: `next(event)` waits for the next one of that name. */
function eventReader(response: Response) {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  const queued: { event: string; data: EventData }[] = [];
  return {
    /** Leaves the stream, as a browser closing the page does. */
    cancel: () => reader.cancel(),
    async next(event: string, where: (data: EventData) => boolean = () => true): Promise<EventData> {
      for (;;) {
        const index = queued.findIndex((e) => e.event === event && where(e.data));
        if (index >= 0) return queued.splice(index, 1)[0]!.data;
        const { value, done } = await reader.read();
        if (done) throw new Error(`stream ended before a ${event} event`);
        buffer += decoder.decode(value, { stream: true });
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const name = /^event: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (name && data !== undefined) queued.push({ event: name, data: JSON.parse(data) });
        }
      }
    },
  };
}

t.test(
  "an agent's logs, files, metrics and status events on real containers",
  { skip: process.env.RUNTIME_DRIVER !== 'docker' && 'no container engine' },
  async (t) => {
    const docker = new Docker({ socketPath: process.env.DOCKER_HOST!.replace('unix://', '') });
    const h = await startAgents(t, {
      AGENT_IMAGE: MINIMAL,
      AGENT_PORT_RANGE: '34000-34999',
      AGENT_READY_TIMEOUT_MS: '20000',
    });
    const base = await h.app.listen({ port: 0, host: '127.0.0.1' });
    const owner = await h.subscribedUser('solo');
    const stranger = await h.subscribedUser('solo');
    const get = (user: { id: string; email: string }, url: string) =>
      h.app.inject({ method: 'GET', url, headers: web(user) });

    // The owner's status events, open before the agent exists: its provisioning is seen as it happens.
    const events = await fetch(`${base}/api/events`, { headers: web(owner) });
    t.equal(events.headers.get('content-type'), 'text/event-stream; charset=utf-8');
    const ownerEvents = eventReader(events);
    await ownerEvents.next('ready');
    const strangerStream = await fetch(`${base}/api/events`, { headers: web(stranger) });
    const strangerEvents = eventReader(strangerStream);
    await strangerEvents.next('ready');

    const provisioned = await h.app.inject({
      method: 'POST',
      url: '/api/agents/provision',
      headers: web(owner),
      payload: { name: 'workspace', tier: 'starter' },
    });
    t.equal(provisioned.statusCode, 201, provisioned.body);
    const id = provisioned.json().agent.id as string;
    t.match(await h.provisioned(id), /^running/);
    const running = await ownerEvents.next('agent-status', (e) => e.agentId === id && e.status === 'running');
    t.ok(running.previousStatus, 'the change names the status before it');
    const row = (await h.agentRow(id))!;
    const exec = (cmd: string[]) => execIn(docker, row.container_id!, cmd);

    await t.test('logs: history and the live stream carry no secret of the agent', async (t) => {
      const keyring = parseKeyring(h.config.ENCRYPTION_KEYS);
      const gatewayToken = openAgentSecret(keyring, id, 'gateway-token', row.gateway_token_sealed!);
      const hooksToken = openAgentSecret(keyring, id, 'hooks-token', row.hooks_token_sealed!);
      // The agent's AI key is only in its own config file (the platform keeps its hash).
      const binds = (await docker.getContainer(row.container_id!).inspect()).HostConfig.Binds ?? [];
      const configDir = binds.map((b) => b.split(':')).find(([, inside]) => inside === '/run/agentyard')![0]!;
      const aiKey = /"(ag_[A-Za-z0-9_-]+)"/.exec(await readFile(join(configDir, 'openclaw.json'), 'utf8'))![1]!;
      const bearer = 'Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.not-a-platform-token';
      // Written to the gateway's own stdout and stderr (pid 1 is the init, whose output is the container's).
      const plant = (text: string, fd = 1) => exec(['sh', '-c', `printf '%s\\n' "$0" > /proc/1/fd/${fd}`, text]);
      t.equal(await plant(`gateway token ${gatewayToken}`), 0);
      t.equal(await plant(`hooks token ${hooksToken}`, 2), 0);
      t.equal(await plant(`model key ${aiKey}`), 0);
      t.equal(await plant(bearer), 0);

      const history = await get(owner, `/api/logs/${id}/history?lines=20`);
      t.equal(history.statusCode, 200, history.body);
      const lines = history.json().lines as { time: string; stream: string; text: string }[];
      t.ok(lines.length <= 20);
      const text = lines.map((l) => l.text).join('\n');
      for (const secret of [gatewayToken, hooksToken, aiKey, 'eyJhbGciOiJIUzI1NiJ9'])
        t.notOk(text.includes(secret), 'no secret leaves the platform');
      t.ok(
        lines.some((l) => l.stream === 'stdout' && l.text === 'gateway token [redacted]'),
        'the gateway token is redacted',
      );
      t.ok(
        lines.some((l) => l.stream === 'stderr' && l.text === 'hooks token [redacted]'),
        'the hooks token is redacted, on stderr',
      );
      t.ok(
        lines.some((l) => l.text === 'model key [redacted]'),
        'the AI key is redacted',
      );
      t.ok(
        lines.some((l) => l.text === 'Authorization: Bearer [redacted]'),
        'a bearer token is redacted',
      );
      t.ok(
        lines.every((l) => !Number.isNaN(Date.parse(l.time))),
        "each line has the engine's time",
      );
      t.equal((await get(owner, `/api/logs/${id}/history?lines=1001`)).statusCode, 400);
      t.equal((await get(stranger, `/api/logs/${id}/history`)).statusCode, 404, "another user's agent is not found");

      const left = new AbortController();
      const stream = await fetch(`${base}/api/logs/${id}/stream`, { headers: web(owner), signal: left.signal });
      t.equal(stream.status, 200);
      const reader = stream.body!.getReader();
      t.match(new TextDecoder().decode((await reader.read()).value), /^: connected/);
      // Written after the stream opened: the engine's follow mode delivers it.
      t.equal(await plant(`live ${gatewayToken}`), 0);
      const live = await eventReader(
        new Response(
          new ReadableStream({
            pull: async (c) => {
              const r = await reader.read();
              if (r.done) c.close();
              else c.enqueue(r.value);
            },
          }),
        ),
      ).next('line', (l) => String(l.text).startsWith('live'));
      t.equal(live.text, 'live [redacted]');
      left.abort();
      t.equal((await fetch(`${base}/api/logs/${id}/stream`, { headers: web(stranger) })).status, 404);
    });

    await t.test('files: upload, list, download and delete, confined to the workspace', async (t) => {
      const upload = await h.app.inject({
        method: 'POST',
        url: `/api/files?agentId=${id}&path=uploads/notes/tea.txt`,
        headers: { ...web(owner), 'content-type': 'text/plain' },
        payload: 'Steep for four minutes.\n',
      });
      t.equal(upload.statusCode, 201, upload.body);
      t.has(upload.json(), { agentId: id, path: 'uploads/notes/tea.txt', size: 24 });
      t.equal(
        await exec(['sh', '-c', `test "$(cat ${WORKSPACE}/uploads/notes/tea.txt)" = 'Steep for four minutes.'`]),
        0,
        'the agent sees the file in its own workspace',
      );
      t.equal(
        await exec(['sh', '-c', `test "$(stat -c %u ${WORKSPACE}/uploads/notes/tea.txt)" = 1000`]),
        0,
        "the file is the agent's",
      );

      const listed = await get(owner, `/api/files?agentId=${id}&path=uploads/notes`);
      t.equal(listed.statusCode, 200, listed.body);
      t.has(listed.json().entries, [{ name: 'tea.txt', path: 'uploads/notes/tea.txt', type: 'file', size: 24 }]);
      const uploads = await get(owner, `/api/files?agentId=${id}`);
      t.has(
        uploads.json(),
        { path: 'uploads', entries: [{ name: 'notes', type: 'directory' }] },
        'uploads/ by default',
      );

      const download = await get(owner, `/api/files?agentId=${id}&path=uploads/notes/tea.txt&download=1`);
      t.equal(download.statusCode, 200);
      t.equal(download.body, 'Steep for four minutes.\n');
      t.equal(download.headers['content-type'], 'application/octet-stream', 'opaque bytes, whatever the name');
      t.match(download.headers['content-disposition'], /^attachment/);

      // What the agent itself wrote, and a link it made to leave its workspace.
      t.equal(
        await exec([
          'sh',
          '-c',
          `echo secret-of-host > /tmp/outside && ln -s /etc ${WORKSPACE}/escape && ln -s /home/node/.openclaw ${WORKSPACE}/state`,
        ]),
        0,
      );
      for (const path of [
        'escape/passwd',
        'state/openclaw.json',
        '../openclaw.json',
        '/etc/passwd',
        'uploads/../../openclaw.json',
      ]) {
        const res = await get(owner, `/api/files?agentId=${id}&path=${encodeURIComponent(path)}&download=1`);
        t.equal(res.statusCode, 400, `${path}: ${res.body}`);
        t.type(res.json().error, 'string');
      }
      const throughLink = await h.app.inject({
        method: 'POST',
        url: `/api/files?agentId=${id}&path=escape/planted`,
        headers: web(owner),
        payload: 'x',
      });
      t.equal(throughLink.statusCode, 400, 'no upload through a link');
      t.equal(await exec(['test', '!', '-e', '/etc/planted']), 0);

      const tooLarge = await h.app.inject({
        method: 'POST',
        url: `/api/files?agentId=${id}&path=uploads/big.bin`,
        headers: { ...web(owner), 'content-type': 'application/octet-stream' },
        payload: Buffer.alloc(25 * 1024 * 1024 + 1),
      });
      t.equal(tooLarge.statusCode, 413, tooLarge.body);
      t.match(tooLarge.json().error, /26214400 bytes/, 'the limit in the message');
      t.equal(
        await exec(['sh', '-c', `test -z "$(ls -A ${WORKSPACE}/uploads | grep -v notes)"`]),
        0,
        'nothing of the refused upload is left',
      );

      t.equal((await get(stranger, `/api/files?agentId=${id}`)).statusCode, 404);
      t.equal(
        (
          await h.app.inject({
            method: 'DELETE',
            url: `/api/files?agentId=${id}&path=uploads/notes/tea.txt`,
            headers: web(stranger),
          })
        ).statusCode,
        404,
      );
      const removed = await h.app.inject({
        method: 'DELETE',
        url: `/api/files?agentId=${id}&path=uploads/notes/tea.txt`,
        headers: web(owner),
      });
      t.equal(removed.statusCode, 200, removed.body);
      t.equal(await exec(['test', '!', '-e', `${WORKSPACE}/uploads/notes/tea.txt`]), 0);
      t.equal(
        (
          await h.app.inject({
            method: 'DELETE',
            url: `/api/files?agentId=${id}&path=uploads/notes/tea.txt`,
            headers: web(owner),
          })
        ).statusCode,
        404,
      );
      t.equal(
        (await h.app.inject({ method: 'DELETE', url: `/api/files?agentId=${id}&path=escape`, headers: web(owner) }))
          .statusCode,
        200,
        'a link is removed, not what it points to',
      );
      t.equal(await exec(['test', '-e', '/etc/passwd']), 0);
    });

    await t.test(
      "files through the edge: a few MB arrive whole, one past the plan's size per file is 413 FILE_TOO_LARGE",
      async (t) => {
        // The real edge (the whole catalog) in front of this agents service, the owner signed in with a session cookie.
        const edgeConfig = loadEdgeConfig({ ...process.env, QUEUE_PREFIX: h.config.QUEUE_PREFIX });
        const redis = rateLimitRedis(edgeConfig.REDIS_URL);
        if (redis.status !== 'ready') await once(redis, 'ready');
        const edge = await buildEdge(edgeConfig, {
          db: appDb(),
          redis,
          health: { current: () => 'healthy' },
          upstreamOf: () => base,
        });
        t.teardown(async () => {
          await edge.close();
          redis.disconnect();
        });
        await edge.web.listen({ host: '127.0.0.1', port: 0 });
        const edgeUrl = `http://127.0.0.1:${(edge.web.server.address() as { port: number }).port}`;
        const token = randomToken();
        await systemDb()
          .insertInto('sessions')
          .values({ user_id: owner.id, token_hash: hashToken(token), expires_at: new Date(Date.now() + 3600_000) })
          .execute();
        const cookie = `agentyard-session=${token}`;
        const files = (query: string, init: RequestInit = {}) =>
          fetch(`${edgeUrl}/api/files?agentId=${id}&${query}`, {
            ...init,
            headers: { cookie, ...init.headers },
            signal: AbortSignal.timeout(120_000),
          });
        const solo = workspaceLimitsOf('solo');
        const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

        const photo = randomBytes(6 * 1024 * 1024 + 123); // over the edge's 1 MB for other bodies, under solo's 25 MB per file
        const uploaded = await files('path=uploads/photo.raw', {
          method: 'POST',
          headers: { 'content-type': 'application/octet-stream' },
          body: photo,
        });
        t.equal(uploaded.status, 201, 'an upload of a few MB goes through the edge');
        t.has(await uploaded.json(), {
          agentId: id,
          path: 'uploads/photo.raw',
          size: photo.length,
          limitBytes: solo.totalBytes,
        });
        t.equal(
          await exec(['sh', '-c', `test "$(stat -c %s ${WORKSPACE}/uploads/photo.raw)" = ${photo.length}`]),
          0,
          'the agent sees all of it',
        );
        const downloaded = await files('path=uploads/photo.raw&download=1');
        t.equal(downloaded.status, 200);
        const back = new Uint8Array(await downloaded.arrayBuffer());
        t.equal(back.length, photo.length);
        t.equal(sha256(back), sha256(photo), 'and it downloads byte for byte');

        const tooLarge = await files('path=uploads/huge.raw', {
          method: 'POST',
          headers: { 'content-type': 'application/octet-stream' },
          body: new Uint8Array(solo.fileBytes + 1),
        });
        t.equal(tooLarge.status, 413, "past solo's size per file");
        const refusal = (await tooLarge.json()) as { error: string; code: string };
        t.equal(refusal.code, 'FILE_TOO_LARGE', "the service's answer, relayed");
        t.match(refusal.error, `${solo.fileBytes} bytes`, 'the limit in the message');
        t.equal(
          await exec(['sh', '-c', `test -z "$(ls -A ${WORKSPACE}/uploads | grep -v -x -e notes -e photo.raw)"`]),
          0,
          'nothing of the refused upload is left',
        );
        t.equal((await files('path=uploads/photo.raw', { method: 'DELETE' })).status, 200);
      },
    );

    await t.test("metrics: the sampler's passes and the usage rows, by range", async (t) => {
      const before = await get(owner, `/api/metrics?agentId=${id}&range=1h`);
      t.equal(before.statusCode, 200, before.body);
      t.equal(before.json().summary.uptimePercent, null, 'no sample yet: no uptime');
      t.ok(
        before
          .json()
          .points.every(
            (p: { cpuPercent: unknown; messages: unknown }) => p.cpuPercent === null && p.messages === null,
          ),
        'no data: null',
      );

      const pass = await sampleAgentMetrics(systemDb(), h.driver, 4);
      t.ok(pass.sampled >= 1 && pass.running >= 1, JSON.stringify(pass));
      await systemDb()
        .insertInto('usage_events')
        .values({
          id: crypto.randomUUID(),
          user_id: owner.id,
          user_ref: owner.id,
          agent_id: id,
          model: 'test/model',
          provider: 'openai',
          input_tokens: 5,
          output_tokens: 3,
          total_tokens: 8,
          cost_usd: '0.0004',
          turn_count: 1,
          occurred_at: new Date(),
          day: new Date().toISOString().slice(0, 10),
        })
        .execute();
      const after = await get(owner, `/api/metrics?agentId=${id}&range=1h`);
      t.equal(after.statusCode, 200, after.body);
      const body = after.json();
      const last = body.points.at(-1);
      t.ok(last.memoryBytes > 0, 'memory from the engine');
      t.type(last.cpuPercent, 'number');
      t.equal(last.messages, 1);
      t.equal(last.tokens, 8);
      t.equal(last.costUsd, 0.0004);
      t.equal(last.errors, 0, 'no call failed at every provider: 0 errors (a count from the usage rows)');
      t.match(body.summary, { uptimePercent: 100, messages: 1, costUsd: 0.0004, p50LatencyMs: null });
      const week = await get(owner, `/api/metrics?agentId=${id}&range=7d`);
      t.ok(week.json().points.at(-1).memoryBytes > 0, 'the hourly rollup serves the long ranges');
      t.equal((await get(owner, `/api/metrics?agentId=${id}&range=2d`)).statusCode, 400);
      t.equal((await get(stranger, `/api/metrics?agentId=${id}`)).statusCode, 404);
    });

    await t.test('status events reach only the owner', async (t) => {
      const stopped = await h.app.inject({ method: 'POST', url: `/api/agents/${id}/stop`, headers: backend(owner) });
      t.ok(stopped.statusCode < 300, stopped.body);
      const event = await ownerEvents.next('agent-status', (e) => e.agentId === id && e.status === 'stopped');
      t.equal(event.previousStatus, 'running');
      // The stranger's stream sees its own agent's change first, nothing of the owner's.
      const [strangerAgent] = await systemDb()
        .insertInto('agents')
        .values({
          user_id: stranger.id,
          name: 'theirs',
          model: 'openrouter/auto',
          tools_profile: 'messaging',
          subdomain: `theirs-${id.slice(0, 8)}`,
        })
        .returning('id')
        .execute();
      const first = await strangerEvents.next('agent-status');
      t.equal(first.agentId, strangerAgent!.id);
    });

    await ownerEvents.cancel();
    await strangerEvents.cancel();
  },
);
