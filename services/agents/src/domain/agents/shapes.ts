import type { AgentsTable, Selectable } from '@agentyard/db';

export type AgentRow = Selectable<AgentsTable>;

const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());

/** Where clients reach an agent: `<AGENT_PUBLIC_URL>/<id>` over HTTP and its WebSocket form. */
export function agentUrls(publicUrl: string, id: string) {
  const url = `${publicUrl.replace(/\/$/, '')}/${id}`;
  return { url, websocketUrl: url.replace(/^http/, 'ws') };
}

export function webAgent(row: AgentRow, publicUrl: string) {
  return {
    id: row.id, name: row.name, model: row.model, status: row.status,
    websocketUrl: agentUrls(publicUrl, row.id).websocketUrl,
    createdAt: iso(row.created_at)!, updatedAt: iso(row.updated_at)!,
  };
}

export function webAgentDetail(row: AgentRow, publicUrl: string) {
  return {
    ...webAgent(row, publicUrl),
    plan: row.plan, tier: row.tier, aiProvider: row.ai_provider, toolsProfile: row.tools_profile,
    subdomain: row.subdomain, url: agentUrls(publicUrl, row.id).url, lastError: row.last_error,
  };
}

export function backendListItem(row: AgentRow, publicUrl: string) {
  return { id: row.id, status: row.status, created: iso(row.created_at)!, subdomain: row.subdomain, url: agentUrls(publicUrl, row.id).url };
}

export function backendDetail(row: AgentRow, publicUrl: string) {
  return {
    id: row.id, status: row.status, startedAt: iso(row.started_at), plan: row.plan, subdomain: row.subdomain,
    url: agentUrls(publicUrl, row.id).url, runtimeVersion: row.runtime_version, verified: row.verified,
    verificationType: row.verification_type, attestationUid: row.attestation_uid, verifiedAt: iso(row.verified_at),
  };
}

export function provisionedAgent(row: AgentRow, publicUrl: string) {
  return { id: row.id, name: row.name, status: row.status, websocketUrl: agentUrls(publicUrl, row.id).websocketUrl, model: row.model, createdAt: iso(row.created_at)! };
}
