import type { AgentsTable, Selectable } from '@agentyard/db';

export type AgentRow = Selectable<AgentsTable>;

const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());

/** Where clients reach an agent: `<AGENT_PUBLIC_URL>/<id>` over HTTP and its WebSocket form. */
export function agentUrls(publicUrl: string, id: string) {
  const url = `${publicUrl.replace(/\/$/, '')}/${id}`;
  return { url, websocketUrl: url.replace(/^http/, 'ws') };
}

/** How deep a suspended agent hibernates; null for any other status. */
const hibernationOf = (row: AgentRow) => (row.status === 'suspended' ? (row.hibernation ?? 'paused') : null);

export function webAgent(row: AgentRow, publicUrl: string) {
  return {
    id: row.id,
    name: row.name,
    model: row.model,
    status: row.status,
    hibernation: hibernationOf(row),
    websocketUrl: agentUrls(publicUrl, row.id).websocketUrl,
    createdAt: iso(row.created_at)!,
    updatedAt: iso(row.updated_at)!,
  };
}

/**
 * Why an agent failed, as the web may show it: a fixed set of messages. The engine's own words
 * (container engine messages, host paths) go to `last_error_detail`: logs, the backend surface, admins.
 */
export const AGENT_FAILURES = {
  notQueued: 'Provisioning could not be queued',
  timedOut: 'Provisioning did not finish in time',
  notReady: 'Agent did not become ready in time',
  containerFailed: 'Container failed to start',
  directFailed: 'Direct provisioning failed',
  planEnded: 'Stopped: your plan no longer covers this agent',
  exited: 'Exited unexpectedly: restarting',
  crashLoop: 'Crash loop: it exited 3 times in 5 minutes and is no longer restarted',
} as const;
export type AgentFailure = (typeof AGENT_FAILURES)[keyof typeof AGENT_FAILURES];
const SHOWN_FAILURES: ReadonlySet<string> = new Set(Object.values(AGENT_FAILURES));

/** The web's message for a stored failure; anything outside the set (rows written before it) reads as a failed start. */
export const shownFailure = (stored: string | null): string | null =>
  stored === null || SHOWN_FAILURES.has(stored) ? stored : AGENT_FAILURES.containerFailed;

/**
 * The owner's view of an agent; `images` names the image it runs (the default one until an update
 * chose another) and those its owner may update it to.
 */
export function webAgentDetail(
  row: AgentRow,
  publicUrl: string,
  images: { defaultImage: string; offered: string[] },
  viewer: { admin: boolean } = { admin: false },
) {
  return {
    ...webAgent(row, publicUrl),
    plan: row.plan,
    tier: row.tier,
    aiProvider: row.ai_provider,
    toolsProfile: row.tools_profile,
    subdomain: row.subdomain,
    url: agentUrls(publicUrl, row.id).url,
    lastError: shownFailure(row.last_error),
    stopsBeyondPlanAt: row.status === 'stopped' || row.status === 'error' ? null : iso(row.stops_beyond_plan_at),
    images: { current: row.image ?? images.defaultImage, allowed: images.offered },
    ...(viewer.admin ? { lastErrorDetail: failureDetail(row) } : {}),
  };
}

/** The failure in full: the detail when there is one, else what was stored. */
const failureDetail = (row: AgentRow): string | null => row.last_error_detail ?? row.last_error;

export function backendListItem(row: AgentRow, publicUrl: string) {
  return {
    id: row.id,
    status: row.status,
    created: iso(row.created_at)!,
    subdomain: row.subdomain,
    url: agentUrls(publicUrl, row.id).url,
  };
}

export function backendDetail(row: AgentRow, publicUrl: string) {
  return {
    id: row.id,
    status: row.status,
    hibernation: hibernationOf(row),
    startedAt: iso(row.started_at),
    plan: row.plan,
    subdomain: row.subdomain,
    url: agentUrls(publicUrl, row.id).url,
    runtimeVersion: row.runtime_version,
    verified: row.verified,
    verificationType: row.verification_type,
    attestationUid: row.attestation_uid,
    verifiedAt: iso(row.verified_at),
    lastError: shownFailure(row.last_error),
    lastErrorDetail: failureDetail(row),
  };
}

export function provisionedAgent(row: AgentRow, publicUrl: string) {
  return {
    id: row.id,
    name: row.name,
    status: row.status,
    websocketUrl: agentUrls(publicUrl, row.id).websocketUrl,
    model: row.model,
    createdAt: iso(row.created_at)!,
  };
}
