import { Type } from 'typebox';
import { Errors, IsoDate, Nullable, Uuid } from './common.ts';
import { route, type RouteSpec } from './route.ts';

// ── Installations (issue 32): an OpenClaw the user runs on their own machine, linked to the platform ──

/** `local`: the gateway listens only on the user's machine; `remote`: it is reachable at `gatewayUrl`. */
export const InstallationMode = Type.Union([Type.Literal('local'), Type.Literal('remote')]);
/** `home`: set up by the `/install` script; `link`: an OpenClaw already running, linked by `/link`. */
export const InstallationKind = Type.Union([Type.Literal('home'), Type.Literal('link')]);

const GatewayUrl = Type.String({
  minLength: 8,
  maxLength: 2048,
  pattern: '^https?://[^\\s]+$',
  description: 'http(s) URL of the OpenClaw gateway',
});

export const RegisterInstallationBody = Type.Object(
  {
    mode: InstallationMode,
    /** A name for the machine (the script sends its hostname). */
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    gatewayUrl: Type.Optional(GatewayUrl),
    /** The gateway's token: sealed at rest, never answered back. */
    gatewayToken: Type.Optional(Type.String({ minLength: 8, maxLength: 512 })),
    version: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  },
  { additionalProperties: false },
);
export const InstallationRegistered = Type.Object({ installationId: Uuid, dashboardUrl: Type.String() });

export const InstallationParams = Type.Object({ id: Uuid });
export const HeartbeatBody = Type.Object(
  { version: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })) },
  { additionalProperties: false },
);

/** `online`: seen within INSTALLATION_OFFLINE_AFTER_SECONDS; `offline`: seen before; `never-seen`: no heartbeat yet. */
export const InstallationStatus = Type.Union([
  Type.Literal('online'),
  Type.Literal('offline'),
  Type.Literal('never-seen'),
]);
export const Installation = Type.Object({
  id: Uuid,
  kind: InstallationKind,
  mode: InstallationMode,
  name: Nullable(Type.String()),
  gatewayUrl: Nullable(Type.String()),
  hasGatewayToken: Type.Boolean(),
  version: Nullable(Type.String()),
  status: InstallationStatus,
  lastSeenAt: Nullable(IsoDate),
  createdAt: IsoDate,
});
export const InstallationList = Type.Object({ installations: Type.Array(Installation) });
export const InstallationEnvelope = Type.Object({ installation: Installation });
export const InstallationDeleted = Type.Object({ deleted: Type.Literal(true), id: Uuid });
/** A shell script (`text/x-shellscript`) to pipe into bash. */
export const ShellScript = Type.String({ description: 'a POSIX shell script', contentMediaType: 'text/x-shellscript' });

const owners = {
  service: 'agents',
  surfaces: ['web'],
  auth: 'user',
  rateLimit: 'web-installations',
} satisfies Partial<RouteSpec>;
const script = {
  service: 'agents',
  surfaces: ['web'],
  auth: 'none',
  rateLimit: 'web-install-script',
  method: 'GET',
} satisfies Partial<RouteSpec>;

export const installationRoutes = {
  registerHome: route({
    ...owners,
    method: 'POST',
    url: '/api/register-home',
    summary:
      "Registers an OpenClaw set up on the caller's machine by /install; the user is the key's (`Authorization: Bearer sk_…`), never the body's",
    schema: { body: RegisterInstallationBody, response: { 201: InstallationRegistered, ...Errors } },
  }),
  registerLink: route({
    ...owners,
    method: 'POST',
    url: '/api/register-link',
    summary: "Links an OpenClaw already running elsewhere (by /link); the user is the key's, never the body's",
    schema: { body: RegisterInstallationBody, response: { 201: InstallationRegistered, ...Errors } },
  }),
  installationHeartbeat: route({
    ...owners,
    method: 'POST',
    url: '/api/installations/:id/heartbeat',
    summary: 'The installation is alive (and runs `version`): its last-seen time moves to now',
    schema: { params: InstallationParams, body: HeartbeatBody, response: { 200: InstallationEnvelope, ...Errors } },
  }),
  listInstallations: route({
    ...owners,
    method: 'GET',
    url: '/api/installations',
    summary: "The caller's linked installations with last seen and status, newest first",
    schema: { response: { 200: InstallationList, ...Errors } },
  }),
  deleteInstallation: route({
    ...owners,
    method: 'DELETE',
    url: '/api/installations/:id',
    summary: 'Unlinks the installation (its sealed token goes with it)',
    schema: { params: InstallationParams, response: { 200: InstallationDeleted, ...Errors } },
  }),
  installScript: route({
    ...script,
    url: '/install',
    summary: 'The script that registers this machine as a home installation (reads AGENTYARD_API_KEY)',
    schema: { response: { 200: ShellScript, ...Errors } },
  }),
  linkScript: route({
    ...script,
    url: '/link',
    summary:
      'The script that links an OpenClaw gateway already running (reads AGENTYARD_API_KEY, OPENCLAW_GATEWAY_URL, OPENCLAW_GATEWAY_TOKEN)',
    schema: { response: { 200: ShellScript, ...Errors } },
  }),
};
