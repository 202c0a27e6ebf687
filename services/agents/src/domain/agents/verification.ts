import { sql, type Database, type Kysely, type VerificationType } from '@agentyard/db';
import { AgentErrors } from '../../errors.ts';
import type { AgentRow } from './agent-views.ts';

/**
 * An agent's verification. Each function takes the caller's database handle
 * (a web request's row-level-security transaction, or the system connection for API-key calls)
 * and the owner the caller acts for (`null`: the platform itself), so another user's agent is 404.
 */
export interface VerificationInput {
  verificationType: VerificationType;
  verified: boolean;
  verifierAddress: string | null;
  attestationUid: string | null;
  metadata: Record<string, unknown> | null;
}

const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());

export function verificationOf(row: AgentRow) {
  return {
    agentId: row.id,
    verified: row.verified,
    verificationType: row.verification_type,
    attestationUid: row.attestation_uid,
    verifierAddress: row.verifier_address,
    metadata: (row.verification_metadata as Record<string, unknown> | null) ?? null,
    verifiedAt: iso(row.verified_at),
  };
}

/** What a signed-in user's verification records: always verified, by the platform's verifier, attributed to the user. */
export function webVerification(type: VerificationType, userId: string, verifierAddress: string): VerificationInput {
  return {
    verificationType: type,
    verified: true,
    verifierAddress: verifierAddress || null,
    attestationUid: null,
    metadata: { type, verifiedBy: userId, at: new Date().toISOString(), surface: 'web' },
  };
}

const owned = (db: Kysely<Database>, agentId: string, ownerId: string | null) => {
  const q = db.updateTable('agents').where('id', '=', agentId);
  return ownerId ? q.where('user_id', '=', ownerId) : q;
};

export async function agentVerification(db: Kysely<Database>, agentId: string, ownerId: string | null) {
  const q = db.selectFrom('agents').selectAll().where('id', '=', agentId);
  const row = await (ownerId ? q.where('user_id', '=', ownerId) : q).executeTakeFirst();
  if (!row) throw AgentErrors.notFound();
  return verificationOf(row);
}

export async function recordVerification(
  db: Kysely<Database>,
  agentId: string,
  ownerId: string | null,
  input: VerificationInput,
) {
  const row = await owned(db, agentId, ownerId)
    .set({
      verified: input.verified,
      verification_type: input.verificationType,
      verifier_address: input.verifierAddress,
      attestation_uid: input.attestationUid,
      verification_metadata: input.metadata === null ? null : JSON.stringify(input.metadata),
      verified_at: input.verified ? sql<Date>`now()` : null,
      updated_at: sql<Date>`now()`,
    })
    .returningAll()
    .executeTakeFirst();
  if (!row) throw AgentErrors.notFound();
  return verificationOf(row);
}

export async function clearVerification(db: Kysely<Database>, agentId: string, ownerId: string | null) {
  const row = await owned(db, agentId, ownerId)
    .set({
      verified: false,
      verification_type: null,
      verifier_address: null,
      attestation_uid: null,
      verification_metadata: null,
      verified_at: null,
      updated_at: sql<Date>`now()`,
    })
    .returningAll()
    .executeTakeFirst();
  if (!row) throw AgentErrors.notFound();
  return verificationOf(row);
}
