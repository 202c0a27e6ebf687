import t from 'tap';
import { randomBytes, randomUUID, sign } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deviceKeyOf, openAgentSecret, PROTOCOL_VERSION } from '@agentyard/agent-gateway';
import { parseKeyring } from '@agentyard/crypto';
import { OPENCLAW_ENTRY } from '@agentyard/runtime';
import { startAgents, web } from '../agents-harness.ts';
import { modelServer } from '../support/model-server.ts';

// The real OpenClaw gateway (process driver): memory files written and deleted through the
// platform, skills installed on the running gateway and counted against the plan, and devices that
// are the gateway's own pairing state.
t.setTimeout(900_000);

/**
 * A device asking to pair, as a phone's app does: a WebSocket connect with the gateway token and a
 * device key the gateway has never seen. Resolves once the gateway has answered: PAIRING_REQUIRED
 * (pending), or hello-ok where it paired the device silently (a connection over loopback).
 */
function askToPair(
  baseUrl: string,
  gatewayToken: string,
  displayName: string,
): Promise<{ deviceId: string; pending: boolean }> {
  const device = deviceKeyOf(randomBytes(32));
  const client = { id: 'gateway-client', version: '1.0.0', platform: 'linux', mode: 'backend', displayName } as const;
  // Operator scopes beyond reading: a gateway pairs those only on approval, even over loopback.
  const scopes = ['operator.read', 'operator.write', 'operator.admin', 'operator.pairing'];
  const url = new URL(baseUrl);
  url.protocol = 'ws:';
  const socket = new WebSocket(url);
  return new Promise((resolve, reject) => {
    socket.addEventListener('message', (event) => {
      const frame = JSON.parse(String(event.data));
      if (frame.type === 'event' && frame.event === 'connect.challenge') {
        const { nonce, ts } = frame.payload;
        const signed = [
          'v2',
          device.id,
          client.id,
          client.mode,
          'operator',
          scopes.join(','),
          String(ts),
          gatewayToken,
          nonce,
        ].join('|');
        socket.send(
          JSON.stringify({
            type: 'req',
            id: randomUUID(),
            method: 'connect',
            params: {
              minProtocol: PROTOCOL_VERSION,
              maxProtocol: PROTOCOL_VERSION,
              client,
              role: 'operator',
              scopes,
              caps: [],
              auth: { token: gatewayToken },
              device: {
                id: device.id,
                publicKey: device.publicKey,
                signature: sign(null, Buffer.from(signed), device.privateKey).toString('base64url'),
                signedAt: ts,
                nonce,
              },
            },
          }),
        );
      } else if (frame.type === 'res') {
        socket.close();
        if (frame.ok === false && frame.error?.details?.code === 'PAIRING_REQUIRED')
          resolve({ deviceId: device.id, pending: true });
        // Over loopback (the process driver's gateway) OpenClaw pairs a device silently.
        else if (frame.ok === true) resolve({ deviceId: device.id, pending: false });
        else reject(new Error(`expected PAIRING_REQUIRED, got ${JSON.stringify(frame)}`));
      }
    });
    socket.addEventListener('error', () => reject(new Error('pairing connection failed')));
  });
}

const skillMd = (name: string, description: string) =>
  `---\nname: ${name}\ndescription: ${description}\n---\n\n# ${name}\n\nFollow the steps.\n`;

t.test(
  'memory files, skills and devices on the real gateway',
  { skip: !existsSync(OPENCLAW_ENTRY) && 'OpenClaw is not installed (infra/agent-image/build.sh)' },
  async (t) => {
    const model = await modelServer(t, () => 'Noted.');
    const dataDir = await mkdtemp(join(tmpdir(), 'agentyard-skills-devices-'));
    t.teardown(() => rm(dataDir, { recursive: true, force: true }));
    const h = await startAgents(t, {
      RUNTIME_DRIVER: 'process',
      RUNTIME_DATA_DIR: dataDir,
      AGENT_IMAGE: OPENCLAW_ENTRY,
      AGENT_PORT_RANGE: '37000-37999',
      AGENT_AI_GATEWAY_URL: model.url,
      AGENT_READY_TIMEOUT_MS: '240000',
    });
    const user = await h.subscribedUser('solo');
    const stranger = await h.subscribedUser('solo');
    const provisioned = await h.app.inject({
      method: 'POST',
      url: '/api/agents/provision',
      headers: web(user),
      payload: { name: 'Skilled' },
    });
    t.equal(provisioned.statusCode, 201, provisioned.body);
    const agentId = provisioned.json().agent.id as string;
    t.match(await h.provisioned(agentId, 300_000), /^running/, 'the real gateway is up');
    const inject = (method: 'GET' | 'PUT' | 'POST' | 'DELETE', url: string, payload?: object, who = user) =>
      h.app.inject({ method, url, headers: web(who), ...(payload ? { payload } : {}) });
    const workspaceDir = join(h.driver.stateDirectory!(agentId)!.path, 'workspace');

    await t.test('memory files: write, list, read, delete, confined', async (t) => {
      const notes = '# 2026-11-25\nThe kettle is blue.\n';
      const written = await inject('PUT', '/api/memory', { agentId, path: 'memory/2026-11-25.md', content: notes });
      t.equal(written.statusCode, 200, written.body);
      t.match(written.json(), {
        agentId,
        path: /^memory\/2026-11-25\.md$/,
        size: Buffer.byteLength(notes),
        updatedAt: String,
      });
      t.equal(
        await readFile(join(workspaceDir, 'memory/2026-11-25.md'), 'utf8'),
        notes,
        "the file is in the agent's workspace",
      );
      t.equal(
        (await inject('PUT', '/api/memory', { agentId, path: 'memory/other.md', content: 'other' })).statusCode,
        200,
      );
      const listed = await inject('GET', `/api/memory?agentId=${agentId}`);
      t.equal(listed.statusCode, 200, listed.body);
      t.same(
        listed
          .json()
          .files.map((f: { path: string }) => f.path)
          .sort(),
        ['memory/2026-11-25.md', 'memory/other.md'],
        'the gateway lists both',
      );
      const read = await inject('GET', `/api/memory?agentId=${agentId}&path=memory/2026-11-25.md`);
      t.has(read.json(), { agentId, path: 'memory/2026-11-25.md', content: notes }, 'read back through the gateway');
      const deleted = await inject('DELETE', `/api/memory?agentId=${agentId}&path=memory/other.md`);
      t.same([deleted.statusCode, deleted.json()], [200, { deleted: true, agentId, path: 'memory/other.md' }]);
      t.equal((await inject('GET', `/api/memory?agentId=${agentId}&path=memory/other.md`)).statusCode, 404, 'gone');
      t.equal(
        (await inject('DELETE', `/api/memory?agentId=${agentId}&path=memory/other.md`)).statusCode,
        404,
        'deleting it again: 404',
      );
      for (const path of ['../MEMORY.md', 'memory/../../x.md', '/etc/passwd.md', 'memory/a/b.md', 'uploads/a.md']) {
        const bad = await inject('PUT', '/api/memory', { agentId, path, content: 'x' });
        t.equal(bad.statusCode, 400, `PUT ${path}: 400`);
        t.equal(
          (await inject('DELETE', `/api/memory?agentId=${agentId}&path=${encodeURIComponent(path)}`)).statusCode,
          400,
          `DELETE ${path}: 400`,
        );
      }
      t.equal(
        (await inject('PUT', '/api/memory', { agentId, path: 'memory/x.md', content: 'x' }, stranger)).statusCode,
        404,
        "another user's agent: 404",
      );
      t.equal(
        (await inject('DELETE', `/api/memory?agentId=${agentId}&path=memory/2026-11-25.md`, undefined, stranger))
          .statusCode,
        404,
      );
      t.ok(existsSync(join(workspaceDir, 'memory/2026-11-25.md')), 'the stranger changed nothing');
    });

    await t.test("skills: the gateway's list, a custom one seen by the next turn, the plan's limit", async (t) => {
      const first = await inject('GET', `/api/skills?agentId=${agentId}`);
      t.equal(first.statusCode, 200, first.body);
      const listing = first.json();
      t.equal(listing.limit, 3, 'solo: 3 skills');
      t.ok(
        listing.available.length > 10 && listing.available.some((s: { name: string }) => s.name === 'weather'),
        'the bundled skills of the installed OpenClaw',
      );
      t.same(listing.installed, [], 'nothing installed yet');

      const custom = await inject('POST', '/api/skills', {
        agentId,
        name: 'tea-brewer',
        skillMd: skillMd('tea-brewer', 'Brews tea-7781 exactly right'),
      });
      t.equal(custom.statusCode, 200, custom.body);
      t.match(
        custom.json().installed,
        [{ name: /^tea-brewer$/, enabled: true, source: String, description: 'Brews tea-7781 exactly right' }],
        'read back from the gateway',
      );
      t.ok(
        existsSync(join(workspaceDir, 'skills/tea-brewer/SKILL.md')),
        'written to <workspace>/skills/<name>/SKILL.md',
      );

      const bundled = await inject('POST', '/api/skills', { agentId, name: 'weather' });
      t.equal(bundled.statusCode, 200, bundled.body);
      t.ok(
        bundled.json().installed.some((s: { name: string; enabled: boolean }) => s.name === 'weather' && s.enabled),
        'a bundled skill switched on',
      );
      t.notOk(
        bundled.json().available.some((s: { name: string }) => s.name === 'weather'),
        'no longer offered',
      );
      t.equal(
        (
          await inject('POST', '/api/skills', {
            agentId,
            name: 'tea-brewer',
            skillMd: skillMd('tea-brewer', 'Brews tea-7781 hotter'),
          })
        ).statusCode,
        200,
        'replacing one counts nothing more',
      );
      t.equal(
        (await inject('POST', '/api/skills', { agentId, name: 'third', skillMd: skillMd('third', 'The third skill') }))
          .statusCode,
        200,
        'the third of 3',
      );
      const over = await inject('POST', '/api/skills', { agentId, name: 'summarize' });
      t.same(
        [over.statusCode, over.json()],
        [429, { error: 'Skill limit reached for your plan (3)', code: 'SKILL_LIMIT' }],
        'the fourth: 429',
      );
      const overCustom = await inject('POST', '/api/skills', {
        agentId,
        name: 'fourth',
        skillMd: skillMd('fourth', 'One too many'),
      });
      t.equal(overCustom.statusCode, 429);
      t.notOk(existsSync(join(workspaceDir, 'skills/fourth')), 'nothing written over the limit');

      const removed = await inject('DELETE', '/api/skills', { agentId, name: 'third' });
      t.same([removed.statusCode, removed.json()], [200, { deleted: true, agentId, name: 'third' }]);
      t.notOk(existsSync(join(workspaceDir, 'skills/third')), 'its folder is gone');
      const after = (await inject('GET', `/api/skills?agentId=${agentId}`)).json();
      t.same(
        after.installed.map((s: { name: string }) => s.name).sort(),
        ['tea-brewer', 'weather'],
        'the gateway no longer has it',
      );
      t.equal(
        (await inject('DELETE', '/api/skills', { agentId, name: 'weather' })).statusCode,
        200,
        'a bundled one switched off',
      );
      t.ok(
        (await inject('GET', `/api/skills?agentId=${agentId}`))
          .json()
          .available.some((s: { name: string }) => s.name === 'weather'),
        'offered again',
      );
      t.equal(
        (await inject('DELETE', '/api/skills', { agentId, name: 'weather' })).statusCode,
        404,
        'not installed: 404',
      );

      for (const name of ['Tea', 'tea_brewer', '../x', 'a'.repeat(65), '']) {
        const bad = await inject('POST', '/api/skills', { agentId, name, skillMd: skillMd(name, 'x') });
        t.equal(bad.statusCode, 400, `name ${JSON.stringify(name)}: 400`);
      }
      t.equal(
        (await inject('POST', '/api/skills', { agentId, name: 'mismatch', skillMd: skillMd('other', 'x') })).statusCode,
        400,
        'a SKILL.md naming another skill: 400',
      );
      t.equal(
        (
          await inject('POST', '/api/skills', {
            agentId,
            name: 'big',
            skillMd: skillMd('big', 'x') + 'x'.repeat(70_000),
          })
        ).statusCode,
        400,
        'over the size limit: 400',
      );
      t.equal(
        (await inject('POST', '/api/skills', { agentId, name: 'no-such-bundled-skill' })).statusCode,
        404,
        'no such bundled skill: 404',
      );
      t.equal(
        (await inject('GET', `/api/skills?agentId=${agentId}`, undefined, stranger)).statusCode,
        404,
        "another user's agent: 404",
      );
      t.equal(
        (await inject('POST', '/api/skills', { agentId, name: 'sneaky', skillMd: skillMd('sneaky', 'x') }, stranger))
          .statusCode,
        404,
      );
      t.equal((await inject('DELETE', '/api/skills', { agentId, name: 'tea-brewer' }, stranger)).statusCode, 404);
      t.ok(existsSync(join(workspaceDir, 'skills/tea-brewer/SKILL.md')), 'the stranger changed nothing');
    });

    await t.test('devices: a pairing request at the gateway, approved and revoked there', async (t) => {
      const row = (await h.agentRow(agentId))!;
      const gatewayToken = openAgentSecret(
        parseKeyring(h.config.ENCRYPTION_KEYS),
        agentId,
        'gateway-token',
        row.gateway_token_sealed!,
      );
      const asked = await askToPair(row.gateway_url!, gatewayToken, 'Kitchen tablet');
      const { deviceId } = asked;
      const id = `${agentId}:${deviceId}`;
      const listed = await inject('GET', '/api/devices');
      t.equal(listed.statusCode, 200, listed.body);
      t.notOk(
        [...listed.json().pending, ...listed.json().approved].some(
          (d: { id: string; name: string }) => d.name === 'gateway-client' && d.id !== id,
        ),
        "the platform's own device left out",
      );
      t.same(
        (await inject('GET', '/api/devices', undefined, stranger)).json(),
        { pending: [], approved: [] },
        "not another user's",
      );
      t.equal(
        (await inject('POST', '/api/devices', { deviceId: id, action: 'approve' }, stranger)).statusCode,
        404,
        'another user: 404',
      );
      if (asked.pending) {
        t.match(
          listed.json(),
          { pending: [{ id, status: /^pending$/, firstSeen: String, lastSeen: String }], approved: [] },
          'pending as it arrived',
        );
        t.equal(
          (await inject('POST', '/api/devices', { deviceId: id, action: 'revoke' })).statusCode,
          400,
          'a pending device cannot be revoked',
        );
        const approved = await inject('POST', '/api/devices', { deviceId: id, action: 'approve' });
        t.equal(approved.statusCode, 200, approved.body);
        t.has(approved.json(), { success: true, pending: [], approved: [{ id, status: 'approved' }] });
      } else {
        // A loopback client (the process driver's gateway) is let in without any pairing record: nothing to list or act on.
        t.same(listed.json(), { pending: [], approved: [] }, 'a loopback client leaves no pairing state');
        t.comment(
          'not proven here: pending → approve → revoke needs a gateway reached from elsewhere (container engine)',
        );
        return;
      }
      const rpc = async () =>
        (
          (await (
            await fetch(new URL('/api/v1/admin/rpc', row.gateway_url!), {
              method: 'POST',
              headers: { authorization: `Bearer ${gatewayToken}`, 'content-type': 'application/json' },
              body: JSON.stringify({ method: 'device.pair.list', params: {} }),
            })
          ).json()) as { payload: unknown }
        ).payload as { paired: { deviceId: string }[]; pending: { deviceId: string }[] };
      t.ok(
        (await rpc()).paired.some((d) => d.deviceId === deviceId),
        'paired on the gateway',
      );
      t.equal(
        (await inject('POST', '/api/devices', { deviceId: id, action: 'approve' })).statusCode,
        400,
        'approved twice: 400',
      );

      const revoked = await inject('POST', '/api/devices', { deviceId: id, action: 'revoke' });
      t.equal(revoked.statusCode, 200, revoked.body);
      t.match(revoked.json(), { success: true, approved: [] });
      t.notOk(
        (await rpc()).paired.some((d) => d.deviceId === deviceId),
        'removed from the gateway',
      );
      t.same(
        (await inject('POST', '/api/devices', { deviceId: id, action: 'approve' })).json(),
        { error: 'Device is not pending' },
        'a revoked device: the recorded decision answers',
      );

      if (asked.pending) {
        const second = await askToPair(row.gateway_url!, gatewayToken, 'Old phone');
        const denied = await inject('POST', '/api/devices', {
          deviceId: `${agentId}:${second.deviceId}`,
          action: 'deny',
        });
        t.equal(denied.statusCode, 200, denied.body);
        t.notOk(
          (await rpc()).pending.some((d) => d.deviceId === second.deviceId),
          'rejected on the gateway',
        );
      }
    });
  },
);
