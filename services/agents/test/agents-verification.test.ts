import t from 'tap';
import { randomBytes, randomUUID } from 'node:crypto';
import { createUserRow, systemDb } from '@agentyard/testing';
import { backend, web } from './agents-harness.ts';
import { build } from './helper.ts';

// Verification of an agent (eas, coinbase, ens, webauthn) on both surfaces: the web vouches with the
// platform's verifier, backend callers report their own outcome, DELETE clears it, owners only.
const VERIFIER = `0x${'ab'.repeat(20)}`;
const env = () => ({
  QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}-verify${randomBytes(3).toString('hex')}`,
  RUNTIME_DRIVER: 'process',
  AGENT_VERIFIER_ADDRESS: VERIFIER,
});

async function agentOf(userId: string) {
  return systemDb()
    .insertInto('agents')
    .values({
      user_id: userId,
      name: 'Verified one',
      model: 'openrouter/auto',
      tools_profile: 'messaging',
      subdomain: `v-${randomUUID().slice(0, 8)}`,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
}
const row = (id: string) =>
  systemDb()
    .selectFrom('agents')
    .select([
      'verified',
      'verification_type',
      'verifier_address',
      'attestation_uid',
      'verification_metadata',
      'verified_at',
    ])
    .where('id', '=', id)
    .executeTakeFirstOrThrow();

t.test("web: each type verifies with the platform's verifier address and the user as verifier", async (t) => {
  const app = await build(t, env());
  const user = await createUserRow();
  const { id } = await agentOf(user.id);
  for (const type of ['eas', 'coinbase', 'ens', 'webauthn'] as const) {
    // The web sets the outcome itself: a body claiming otherwise does not change it.
    const res = await app.inject({
      method: 'POST',
      url: `/api/agents/${id}/verify`,
      headers: web(user),
      payload: {
        verificationType: type,
        verified: false,
        verifierAddress: `0x${'00'.repeat(20)}`,
        metadata: { forged: true },
      },
    });
    t.equal(res.statusCode, 200, res.body);
    t.match(res.json(), {
      success: true,
      verification: {
        agentId: id,
        verified: true,
        verificationType: type,
        verifierAddress: VERIFIER,
        attestationUid: null,
        metadata: { type, verifiedBy: user.id, at: String },
        verifiedAt: String,
      },
    });
    t.match(await row(id), {
      verified: true,
      verification_type: type,
      verifier_address: VERIFIER,
      verification_metadata: { type, verifiedBy: user.id },
    });
    t.notOk('forged' in (res.json().verification.metadata as object), "the web's metadata is the platform's own");
  }
  const status = await app.inject({ method: 'GET', url: `/api/agents/${id}/verify`, headers: web(user) });
  t.match(status.json(), { agentId: id, verified: true, verificationType: /^webauthn$/, verifierAddress: VERIFIER });
  const detail = await app.inject({ method: 'GET', url: `/api/agents/${id}`, headers: backend(user) });
  t.match(
    detail.json(),
    { verified: true, verificationType: /^webauthn$/, verifiedAt: String },
    'the backend detail shows it',
  );
});

t.test(
  'backend: the caller gives verified, verifier address, attestation and metadata; GET /verification reads them',
  async (t) => {
    const app = await build(t, env());
    const user = await createUserRow();
    const { id } = await agentOf(user.id);
    const attestationUid = `0x${'1f'.repeat(32)}`;
    const verifier = `0x${'cd'.repeat(20)}`;
    const res = await app.inject({
      method: 'POST',
      url: `/api/agents/${id}/verify`,
      headers: backend(user),
      payload: {
        verificationType: 'eas',
        verified: true,
        verifierAddress: verifier,
        attestationUid,
        metadata: { schema: 'agent-identity', chainId: 8453 },
      },
    });
    t.equal(res.statusCode, 200, res.body);
    const read = await app.inject({ method: 'GET', url: `/api/agents/${id}/verification`, headers: backend(user) });
    t.same(read.json(), {
      agentId: id,
      verified: true,
      verificationType: 'eas',
      attestationUid,
      verifierAddress: verifier,
      metadata: { schema: 'agent-identity', chainId: 8453 },
      verifiedAt: res.json().verification.verifiedAt,
    });

    const refused = await app.inject({
      method: 'POST',
      url: `/api/agents/${id}/verify`,
      headers: backend(user),
      payload: { verificationType: 'ens', verified: false },
    });
    t.has(
      refused.json(),
      { verification: { verified: false, verificationType: 'ens', verifiedAt: null } },
      'a failed verification is recorded as not verified',
    );
  },
);

t.test('DELETE clears every verification field, on both surfaces', async (t) => {
  const app = await build(t, env());
  const user = await createUserRow();
  const { id } = await agentOf(user.id);
  for (const headers of [web(user), backend(user)]) {
    await app.inject({
      method: 'POST',
      url: `/api/agents/${id}/verify`,
      headers,
      payload: { verificationType: 'coinbase' },
    });
    t.equal((await row(id)).verified, true);
    const res = await app.inject({ method: 'DELETE', url: `/api/agents/${id}/verify`, headers });
    t.equal(res.statusCode, 200);
    t.same(res.json().verification, {
      agentId: id,
      verified: false,
      verificationType: null,
      attestationUid: null,
      verifierAddress: null,
      metadata: null,
      verifiedAt: null,
    });
    t.same(await row(id), {
      verified: false,
      verification_type: null,
      verifier_address: null,
      attestation_uid: null,
      verification_metadata: null,
      verified_at: null,
    });
  }
});

t.test("another user's agent is 404 on every verification route and is left unchanged", async (t) => {
  const app = await build(t, env());
  const owner = await createUserRow();
  const other = await createUserRow();
  const { id } = await agentOf(owner.id);
  await app.inject({
    method: 'POST',
    url: `/api/agents/${id}/verify`,
    headers: web(owner),
    payload: { verificationType: 'ens' },
  });
  const before = await row(id);
  const surfaces = { web: web(other), backend: backend(other) };
  const calls = [
    ['GET', 'verify', 'web'],
    ['POST', 'verify', 'web'],
    ['DELETE', 'verify', 'web'],
    ['GET', 'verification', 'backend'],
    ['GET', 'verify', 'backend'],
    ['POST', 'verify', 'backend'],
    ['DELETE', 'verify', 'backend'],
  ] as const;
  for (const [method, path, surface] of calls) {
    const res = await app.inject({
      method,
      url: `/api/agents/${id}/${path}`,
      headers: surfaces[surface],
      ...(method === 'POST' ? { payload: { verificationType: 'eas' } } : {}),
    });
    t.equal(res.statusCode, 404, `${method} /api/agents/:id/${path} on the ${surface} surface`);
    t.same(res.json(), { error: 'Agent not found' });
  }
  t.same(await row(id), before);
});

t.test('an unknown verification type or a malformed address is 400 and changes nothing', async (t) => {
  const app = await build(t, env());
  const user = await createUserRow();
  const { id } = await agentOf(user.id);
  for (const payload of [
    { verificationType: 'passport' },
    {},
    { verificationType: 'eas', verifierAddress: 'not-an-address' },
    { verificationType: 'eas', attestationUid: '0x12' },
  ]) {
    const res = await app.inject({ method: 'POST', url: `/api/agents/${id}/verify`, headers: backend(user), payload });
    t.equal(res.statusCode, 400, JSON.stringify(payload));
    t.match(res.json(), { error: String });
  }
  t.equal((await row(id)).verified, false);
});
