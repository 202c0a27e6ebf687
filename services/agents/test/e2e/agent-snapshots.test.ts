import t from 'tap';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import Docker from 'dockerode';
import { openAgentSecret } from '@agentyard/agent-gateway';
import { repoRoot } from '@agentyard/config';
import { parseKeyring } from '@agentyard/crypto';
import { LABELS } from '@agentyard/runtime';
import { startS3Server } from '@agentyard/testing';
import { snapshotJobId } from '../../src/domain/runtime/snapshots.ts';
import { backend, execIn, startAgents, web } from '../agents-harness.ts';

// Snapshots of real agent containers (the minimal gateway image on the real engine): the archive
// is read back as the owner downloads it and searched for every secret planted in the agent's
// state; memory written in the container comes back after a reset by restoring.
const MINIMAL = 'localhost/agentyard-gateway-minimal:1';
const HOME = '/home/node/.openclaw';

t.test(
  'snapshots: take, list, download without secrets, restore after a reset, delete; owner only',
  { skip: process.env.RUNTIME_DRIVER !== 'docker' && 'no container engine' },
  async (t) => {
    t.setTimeout(240_000);
    const docker = new Docker({ socketPath: process.env.DOCKER_HOST!.replace('unix://', '') });
    const h = await startAgents(t, {
      AGENT_IMAGE: MINIMAL,
      AGENT_PORT_RANGE: '34000-34999',
      AGENT_READY_TIMEOUT_MS: '20000',
    });
    const containers = (agentId: string) =>
      docker.listContainers({
        all: true,
        filters: { label: [`${LABELS.agentId}=${agentId}`, `${LABELS.instance}=${h.config.RUNTIME_INSTANCE}`] },
      });
    const running = async (agentId: string) => (await containers(agentId)).find((c) => c.State === 'running')!.Id;
    const sh = async (agentId: string, script: string) => execIn(docker, await running(agentId), ['sh', '-c', script]);

    const owner = await h.subscribedUser('collective');
    const stranger = await h.subscribedUser('solo');
    const provisioned = await h.app.inject({
      method: 'POST',
      url: '/api/agents/provision',
      headers: web(owner),
      payload: { name: 'remembers', tier: 'starter' },
    });
    const id: string = provisioned.json().agent.id;
    t.match(await h.provisioned(id), /^running/);

    // The agent's own secrets, planted where an agent could leave them: its memory, a channel's credentials, its identity.
    const row = (await h.agentRow(id))!;
    const keyring = parseKeyring(h.config.ENCRYPTION_KEYS);
    const gatewayToken = openAgentSecret(keyring, id, 'gateway-token', row.gateway_token_sealed!);
    const hooksToken = openAgentSecret(keyring, id, 'hooks-token', row.hooks_token_sealed!);
    const binds = (await docker.getContainer(await running(id)).inspect()).HostConfig.Binds ?? [];
    const configDir = binds.map((b) => b.split(':')).find(([, inside]) => inside === '/run/agentyard')![0]!;
    const aiKey = /ag_[A-Za-z0-9_-]{43}/.exec(await readFile(join(configDir, 'openclaw.json'), 'utf8'))![0];
    const telegramToken = '7654321:AAH-telegram-bot-token-planted-here';
    t.equal(
      await sh(
        id,
        `mkdir -p ${HOME}/workspace ${HOME}/credentials ${HOME}/identity && echo 'the blue door; tokens ${gatewayToken} ${hooksToken} ${aiKey}' > ${HOME}/workspace/MEMORY.md`,
      ),
      0,
    );
    t.equal(
      await sh(
        id,
        `echo '{"botToken":"${telegramToken}"}' > ${HOME}/credentials/telegram.json && echo '{"privateKeyPem":"PRIVATE-KEY-PLANTED"}' > ${HOME}/identity/device.json && cp ${HOME}/workspace/MEMORY.md ${HOME}/notes.bin`,
      ),
      0,
    );

    const taken = await h.app.inject({
      method: 'POST',
      url: `/api/agents/${id}/snapshots`,
      headers: web(owner),
      payload: { label: 'before the reset' },
    });
    t.equal(taken.statusCode, 202, taken.body);
    const snapshot = taken.json().snapshot;
    t.equal(snapshot.status, 'pending');
    const outcome = await h.lifecycleJob(snapshotJobId(snapshot.id));
    t.match(outcome, /^taken \(paused \d+ ms\)$/, 'taken with the container paused');
    t.comment(`snapshot of a running agent: ${outcome}`);

    const listed = await h.app.inject({ method: 'GET', url: `/api/agents/${id}/snapshots`, headers: web(owner) });
    t.equal(listed.statusCode, 200);
    const [entry] = listed.json().snapshots;
    t.match(entry, {
      id: snapshot.id,
      label: 'before the reset',
      reason: /^manual$/,
      status: /^ready$/,
      sizeBytes: Number,
      sha256: /^[0-9a-f]{64}$/,
    });

    const download = await h.app.inject({
      method: 'GET',
      url: `/api/agents/${id}/snapshots/${snapshot.id}/download`,
      headers: web(owner),
    });
    t.equal(download.statusCode, 200);
    t.equal(download.headers['content-type'], 'application/gzip');
    t.match(download.headers['content-disposition'], /^attachment; /);
    const archive = download.rawPayload;
    t.equal(archive.length, entry.sizeBytes);
    t.equal(createHash('sha256').update(archive).digest('hex'), entry.sha256, 'the SHA-256 the list names');
    const tar = gunzipSync(archive).toString('latin1');
    t.ok(tar.includes('the blue door'), 'the memory is in it');
    for (const secret of [gatewayToken, hooksToken, aiKey, telegramToken, 'PRIVATE-KEY-PLANTED'])
      t.notOk(tar.includes(secret), 'no secret of the agent in the archive');
    const names = execFileSync('tar', ['-tzf', '-'], { input: archive }).toString().split('\n').filter(Boolean);
    t.equal(names[0], 'manifest.json');
    t.ok(names.includes('state/workspace/MEMORY.md'));
    t.notOk(
      names.some((n) => /^state\/(openclaw\.json|identity|credentials)/.test(n)),
      'config file, identity and credentials left out',
    );
    const manifest = JSON.parse(execFileSync('tar', ['-xzOf', '-', 'manifest.json'], { input: archive }).toString());
    t.match(manifest, {
      format: /^agentyard-snapshot\/1$/,
      agentId: id,
      reason: /^manual$/,
      label: 'before the reset',
      skills: Array,
      channels: Array,
      config: Object,
    });

    await t.test("another user's requests are 404 and change nothing", async (t) => {
      const as = web(stranger);
      for (const [method, url, payload] of [
        ['POST', `/api/agents/${id}/snapshots`, {}],
        ['GET', `/api/agents/${id}/snapshots`, undefined],
        ['GET', `/api/agents/${id}/snapshots/${snapshot.id}/download`, undefined],
        ['DELETE', `/api/agents/${id}/snapshots/${snapshot.id}`, undefined],
        ['POST', `/api/agents/${id}/restore`, { snapshotId: snapshot.id }],
        ['POST', `/api/agents/${id}/clone`, { snapshotId: snapshot.id, name: 'mine now' }],
      ] as const) {
        const res = await h.app.inject({ method, url, headers: as, payload });
        t.equal(res.statusCode, 404, `${method} ${url}`);
      }
      const backendOther = await h.app.inject({
        method: 'GET',
        url: `/api/agents/${id}/snapshots`,
        headers: backend(stranger),
      });
      t.equal(backendOther.statusCode, 404, 'backend, scoped to another user');
      t.equal(
        (await h.app.inject({ method: 'GET', url: `/api/agents/${id}/snapshots`, headers: web(owner) })).json()
          .snapshots.length,
        1,
        'no snapshot taken for them',
      );
    });

    await t.test(
      'reset memory, then restore: the memory is back, the state before is kept as a snapshot',
      async (t) => {
        const reset = await h.app.inject({
          method: 'POST',
          url: `/api/agents/${id}/reset-memory`,
          headers: backend(owner),
        });
        t.equal(reset.statusCode, 200, reset.body);
        t.not(await sh(id, `test -f ${HOME}/workspace/MEMORY.md`), 0, 'the reset wiped it');
        const automatic = (
          await h.app.inject({ method: 'GET', url: `/api/agents/${id}/snapshots`, headers: web(owner) })
        )
          .json()
          .snapshots.find((s: { reason: string }) => s.reason === 'before-reset');
        t.has(automatic, { status: 'ready' }, 'a snapshot was taken before the reset');
        const automaticArchive = (
          await h.app.inject({
            method: 'GET',
            url: `/api/agents/${id}/snapshots/${automatic.id}/download`,
            headers: web(owner),
          })
        ).rawPayload;
        t.ok(
          gunzipSync(automaticArchive).toString('latin1').includes('the blue door'),
          'holding the memory the reset wiped',
        );
        t.equal(await sh(id, `echo 'written after the reset' > ${HOME}/after.txt`), 0);

        const restored = await h.app.inject({
          method: 'POST',
          url: `/api/agents/${id}/restore`,
          headers: web(owner),
          payload: { snapshotId: snapshot.id },
        });
        t.equal(restored.statusCode, 200, restored.body);
        t.match(restored.json(), {
          success: true,
          id,
          snapshotId: snapshot.id,
          beforeRestoreSnapshotId: String,
          status: /^running$/,
        });
        t.equal(await sh(id, `grep -q 'the blue door' ${HOME}/workspace/MEMORY.md`), 0, 'the memory is back');
        t.not(await sh(id, `test -f ${HOME}/after.txt`), 0, 'what came after the snapshot is gone');
        const uid = await sh(id, `test "$(stat -c %u ${HOME}/workspace/MEMORY.md)" = 1000`);
        t.equal(uid, 0, "restored files are the agent's");

        const list = (
          await h.app.inject({ method: 'GET', url: `/api/agents/${id}/snapshots`, headers: web(owner) })
        ).json().snapshots;
        const before = list.find((s: { id: string }) => s.id === restored.json().beforeRestoreSnapshotId);
        t.has(before, { reason: 'before-restore', status: 'ready' });
        const beforeArchive = (
          await h.app.inject({
            method: 'GET',
            url: `/api/agents/${id}/snapshots/${before.id}/download`,
            headers: web(owner),
          })
        ).rawPayload;
        t.ok(
          gunzipSync(beforeArchive).toString('latin1').includes('written after the reset'),
          'the state the restore replaced is in its snapshot',
        );
      },
    );

    await t.test(
      'clone: a new agent of the owner that remembers, with tokens, identity and channels of its own',
      async (t) => {
        const saved = await h.app.inject({
          method: 'PUT',
          url: `/api/agents/${id}/config`,
          headers: web(owner),
          payload: { config: { channels: { telegram: { enabled: true, dmPolicy: 'pairing' } } } },
        });
        t.equal(saved.statusCode, 200, saved.body);
        t.match(await h.configApplied(id, saved.json().updatedAt), /^applied/);
        const res = await h.app.inject({
          method: 'POST',
          url: `/api/agents/${id}/clone`,
          headers: web(owner),
          payload: { name: 'remembers too' },
        });
        t.equal(res.statusCode, 201, res.body);
        const clone = res.json().agent;
        t.not(clone.id, id);
        t.equal(clone.name, 'remembers too');
        t.match(await h.provisioned(clone.id), /^running/);
        t.equal(await sh(clone.id, `grep -q 'the blue door' ${HOME}/workspace/MEMORY.md`), 0, 'the clone remembers');
        t.not(await sh(clone.id, `test -e ${HOME}/identity/device.json`), 0, 'no identity copied');
        t.not(await sh(clone.id, `test -e ${HOME}/credentials/telegram.json`), 0, 'no channel credentials copied');
        const cloneRow = (await h.agentRow(clone.id))!;
        t.not(
          openAgentSecret(keyring, clone.id, 'gateway-token', cloneRow.gateway_token_sealed!),
          gatewayToken,
          'a gateway token of its own',
        );
        t.equal(
          (cloneRow.config as { channels?: { telegram?: { enabled?: boolean } } }).channels?.telegram?.enabled,
          false,
          'channels off until connected',
        );
        const taken = (await h.app.inject({ method: 'GET', url: `/api/agents/${id}/snapshots`, headers: web(owner) }))
          .json()
          .snapshots.find((s: { id: string }) => s.id === res.json().snapshotId);
        t.match(
          taken,
          { reason: /^manual$/, label: 'clone: remembers too', status: /^ready$/ },
          'cloned from a snapshot taken now',
        );
        const strangers = await h.app.inject({
          method: 'POST',
          url: `/api/agents/${id}/clone`,
          headers: web(stranger),
          payload: { name: 'not mine' },
        });
        t.equal(strangers.statusCode, 404, "another user's agent cannot be cloned");
      },
    );

    await t.test('import: a downloaded archive comes back as a snapshot; a tampered one is refused', async (t) => {
      const upload = (as: { id: string; email: string }, payload: Buffer) =>
        h.app.inject({
          method: 'POST',
          url: `/api/agents/${id}/import`,
          headers: { ...web(as), 'content-type': 'application/gzip' },
          payload,
        });
      const count = async () =>
        (await h.app.inject({ method: 'GET', url: `/api/agents/${id}/snapshots`, headers: web(owner) })).json()
          .snapshots.length;
      const before = await count();
      const imported = await upload(owner, archive);
      t.equal(imported.statusCode, 201, imported.body);
      t.match(imported.json().snapshot, {
        reason: /^import$/,
        status: /^ready$/,
        sha256: entry.sha256,
        sizeBytes: entry.sizeBytes,
        label: 'before the reset',
      });
      const tampered = Buffer.from(archive);
      tampered[Math.floor(tampered.length / 2)]! ^= 0xff;
      const refused = await upload(owner, tampered);
      t.equal(refused.statusCode, 400, refused.body);
      t.equal(refused.json().code, 'SNAPSHOT_INVALID');
      t.equal((await upload(stranger, archive)).statusCode, 404, "not into another user's agent");
      t.equal(await count(), before + 1, 'only the good archive was kept');
    });

    await t.test('delete: gone from the list and the store', async (t) => {
      const res = await h.app.inject({
        method: 'DELETE',
        url: `/api/agents/${id}/snapshots/${snapshot.id}`,
        headers: backend(owner),
      });
      t.equal(res.statusCode, 200, res.body);
      t.same(res.json(), { deleted: true, id: snapshot.id });
      t.equal(
        (
          await h.app.inject({
            method: 'GET',
            url: `/api/agents/${id}/snapshots/${snapshot.id}/download`,
            headers: web(owner),
          })
        ).statusCode,
        404,
      );
      t.equal(
        (
          await h.app.inject({
            method: 'DELETE',
            url: `/api/agents/${id}/snapshots/${snapshot.id}`,
            headers: web(owner),
          })
        ).statusCode,
        404,
      );
      t.notOk(
        (await h.app.inject({ method: 'GET', url: `/api/agents/${id}/snapshots`, headers: web(owner) }))
          .json()
          .snapshots.some((s: { id: string }) => s.id === snapshot.id),
      );
    });

    await t.test('deleting the agent takes its archives from the store', async (t) => {
      const left: { id: string }[] = (
        await h.app.inject({ method: 'GET', url: `/api/agents/${id}/snapshots`, headers: web(owner) })
      ).json().snapshots;
      t.ok(left.length > 0, `archives of the agent are kept until it goes (${left.length})`);
      const dir = h.config.SNAPSHOT_DIR || join(repoRoot, '.cache/snapshots');
      t.ok(left.every((s) => existsSync(join(dir, `${s.id}.tar.gz`))));
      const res = await h.app.inject({ method: 'DELETE', url: `/api/agents/${id}`, headers: web(owner) });
      t.equal(res.statusCode, 200, res.body);
      t.same(
        left.filter((s) => existsSync(join(dir, `${s.id}.tar.gz`))),
        [],
        'no archive of the deleted agent is left',
      );
    });
  },
);

t.test(
  'through S3 (SNAPSHOT_STORE=s3): taken into the bucket, downloaded and restored from it, gone with the agent',
  { skip: process.env.RUNTIME_DRIVER !== 'docker' && 'no container engine' },
  async (t) => {
    t.setTimeout(180_000);
    const docker = new Docker({ socketPath: process.env.DOCKER_HOST!.replace('unix://', '') });
    const s3 = await startS3Server();
    t.teardown(() => s3.close());
    // A directory of its own, to see that nothing is kept there.
    const dir = await mkdtemp(join(tmpdir(), 'snapshots-not-here-'));
    t.teardown(() => rm(dir, { recursive: true, force: true }));
    const h = await startAgents(t, {
      AGENT_IMAGE: MINIMAL,
      AGENT_PORT_RANGE: '34000-34999',
      AGENT_READY_TIMEOUT_MS: '20000',
      SNAPSHOT_DIR: dir,
      SNAPSHOT_STORE: 's3',
      SNAPSHOT_S3_BUCKET: s3.bucket,
      SNAPSHOT_S3_REGION: s3.region,
      SNAPSHOT_S3_ENDPOINT: s3.url,
      SNAPSHOT_S3_PREFIX: 'agents/',
      SNAPSHOT_S3_ACCESS_KEY_ID: s3.credentials.accessKeyId,
      SNAPSHOT_S3_SECRET_ACCESS_KEY: s3.credentials.secretAccessKey,
    });
    const sh = async (agentId: string, script: string) => {
      const [container] = await docker.listContainers({
        filters: {
          label: [`${LABELS.agentId}=${agentId}`, `${LABELS.instance}=${h.config.RUNTIME_INSTANCE}`],
          status: ['running'],
        },
      });
      return execIn(docker, container!.Id, ['sh', '-c', script]);
    };
    const keyOf = (snapshotId: string) => `agents/${snapshotId}.tar.gz`;
    const reads = (snapshotId: string) =>
      s3.requests.filter((r) => r.operation === 'GetObject' && r.key === keyOf(snapshotId) && r.status === 200).length;

    const owner = await h.subscribedUser('collective');
    const provisioned = await h.app.inject({
      method: 'POST',
      url: '/api/agents/provision',
      headers: web(owner),
      payload: { name: 'remembers in s3', tier: 'starter' },
    });
    const id: string = provisioned.json().agent.id;
    t.match(await h.provisioned(id), /^running/);
    t.equal(await sh(id, `mkdir -p ${HOME}/workspace && echo 'the green gate' > ${HOME}/workspace/MEMORY.md`), 0);

    const taken = await h.app.inject({
      method: 'POST',
      url: `/api/agents/${id}/snapshots`,
      headers: web(owner),
      payload: { label: 'into the bucket' },
    });
    t.equal(taken.statusCode, 202, taken.body);
    const snapshotId: string = taken.json().snapshot.id;
    t.match(await h.lifecycleJob(snapshotJobId(snapshotId)), /^taken/);
    const [entry] = (
      await h.app.inject({ method: 'GET', url: `/api/agents/${id}/snapshots`, headers: web(owner) })
    ).json().snapshots;
    t.match(entry, { id: snapshotId, status: /^ready$/, sizeBytes: Number, sha256: /^[0-9a-f]{64}$/ });
    const object = s3.objects().get(keyOf(snapshotId));
    t.ok(object, 'the archive is an object of the bucket, under the prefix');
    t.equal(object!.length, entry.sizeBytes);
    t.equal(
      createHash('sha256').update(object!).digest('hex'),
      entry.sha256,
      'the SHA-256 the list names is that of the object',
    );
    t.same(await readdir(dir), [], 'and nothing is kept in the directory');

    const download = await h.app.inject({
      method: 'GET',
      url: `/api/agents/${id}/snapshots/${snapshotId}/download`,
      headers: web(owner),
    });
    t.equal(download.statusCode, 200);
    t.ok(download.rawPayload.equals(object!), 'the download is the object, read from the bucket');
    t.equal(reads(snapshotId), 1);
    t.ok(gunzipSync(download.rawPayload).toString('latin1').includes('the green gate'));

    const reset = await h.app.inject({
      method: 'POST',
      url: `/api/agents/${id}/reset-memory`,
      headers: backend(owner),
    });
    t.equal(reset.statusCode, 200, reset.body);
    t.not(await sh(id, `test -f ${HOME}/workspace/MEMORY.md`), 0, 'the reset wiped the memory');
    const restored = await h.app.inject({
      method: 'POST',
      url: `/api/agents/${id}/restore`,
      headers: web(owner),
      payload: { snapshotId },
    });
    t.equal(restored.statusCode, 200, restored.body);
    t.equal(reads(snapshotId), 2, 'the restore read the archive from the bucket');
    t.equal(await sh(id, `grep -q 'the green gate' ${HOME}/workspace/MEMORY.md`), 0, 'the memory is back');
    const all: { id: string }[] = (
      await h.app.inject({ method: 'GET', url: `/api/agents/${id}/snapshots`, headers: web(owner) })
    ).json().snapshots;
    t.same(
      all.map((s) => keyOf(s.id)).sort(),
      [...s3.objects().keys()].sort(),
      'every snapshot (before the reset, before the restore) is an object of the bucket',
    );

    const removed = await h.app.inject({ method: 'DELETE', url: `/api/agents/${id}`, headers: web(owner) });
    t.equal(removed.statusCode, 200, removed.body);
    t.same([...s3.objects().keys()], [], 'deleting the agent deleted its objects');
    t.same(s3.uploadsInProgress(), []);
  },
);
