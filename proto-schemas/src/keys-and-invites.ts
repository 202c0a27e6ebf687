import { Type } from 'typebox';
import { Errors, IsoDate, Success, Uuid } from './common.ts';
import { NextCursor, PageQueryFields } from './pagination.ts';
import { route } from './route.ts';
import { MinuteLimitsInput, MinuteLimitValues, OwnMinuteLimits } from './spending.ts';

// ---- User API keys ----
export const CreateApiKeyBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  },
  { additionalProperties: false },
);
/** A key without its secret, with its own AI requests and tokens per minute (null: none). */
export const ApiKeySummary = Type.Object({
  id: Uuid,
  name: Type.String(),
  prefix: Type.String(),
  createdAt: IsoDate,
  ...MinuteLimitValues,
});
export const CreatedApiKey = Type.Object({
  id: Uuid,
  name: Type.String(),
  prefix: Type.String(),
  createdAt: IsoDate,
  key: Type.String({ description: '`sk_` + random; shown this once, stored only as a hash' }),
});
export const ApiKeyListQuery = Type.Object(PageQueryFields);
export const ApiKeyList = Type.Object({ keys: Type.Array(ApiKeySummary), nextCursor: NextCursor });
export const ApiKeyParams = Type.Object({ id: Uuid });
/** A key's per-minute limits and the plan's caps they must stay within. */
export const KeyMinuteLimits = OwnMinuteLimits('keyId');
export const ValidateKeyBody = Type.Object(
  { key: Type.String({ minLength: 1, maxLength: 256 }) },
  { additionalProperties: false },
);
export const ValidateKeyResponse = Type.Object({ valid: Type.Boolean() });

// ---- Invites ----
export const CreateInviteBody = Type.Object(
  {
    name: Type.String({
      minLength: 1,
      maxLength: 100,
      description: 'who the invite is for; refused when it looks like markup or an injection',
    }),
  },
  { additionalProperties: false },
);
export const CreatedInvite = Type.Object({
  success: Type.Literal(true),
  inviteUrl: Type.String(),
  token: Type.String(),
});
export const VerifyInviteBody = Type.Object(
  { token: Type.String({ maxLength: 256 }) },
  { additionalProperties: false },
);
export const VerifiedInvite = Type.Object({
  valid: Type.Literal(true),
  plan: Type.Literal('solo'),
  note: Type.Optional(Type.String({ description: 'only when verified by format alone' })),
});
export const InviteStatus = Type.Union([Type.Literal('active'), Type.Literal('used'), Type.Literal('expired')]);
export const AdminInvite = Type.Object({
  code: Type.String(),
  email: Type.Union([Type.String(), Type.Null()]),
  createdAt: IsoDate,
  usedAt: Type.Optional(IsoDate),
  status: InviteStatus,
  userId: Type.Optional(Uuid),
});
export const AdminInviteListQuery = Type.Object(PageQueryFields);
/** `invites`: one page, newest first; `total` and `active` count every invite. */
export const AdminInviteList = Type.Object({
  invites: Type.Array(AdminInvite),
  total: Type.Integer(),
  active: Type.Integer(),
  nextCursor: NextCursor,
});
export const AdminCreateInviteBody = Type.Object(
  { email: Type.String({ minLength: 1, maxLength: 320 }) },
  { additionalProperties: false },
);
export const AdminCreatedInvite = Type.Object({
  success: Type.Literal(true),
  code: Type.String(),
  email: Type.String(),
  inviteUrl: Type.String(),
});

export const keyRoutes = {
  createKey: route({
    method: 'POST',
    url: '/api/keys',
    service: 'auth',
    surfaces: ['web'],
    auth: 'user',
    summary: 'Create a user API key (`sk_...`), shown once (429 API_KEY_LIMIT at the per-user cap)',
    schema: { body: CreateApiKeyBody, response: { 201: CreatedApiKey, ...Errors } },
  }),
  listKeys: route({
    method: 'GET',
    url: '/api/keys',
    service: 'auth',
    surfaces: ['web'],
    auth: 'user',
    summary:
      "The user's API keys, without their secrets, newest first, in pages of `limit` (default 50, at most 100) from `cursor`",
    schema: { querystring: ApiKeyListQuery, response: { 200: ApiKeyList, ...Errors } },
  }),
  deleteKey: route({
    method: 'DELETE',
    url: '/api/keys/:id',
    service: 'auth',
    surfaces: ['web'],
    auth: 'user',
    summary: "Revoke one of the user's API keys",
    schema: { params: ApiKeyParams, response: { 200: Success, ...Errors } },
  }),
  // The AI gateway's rule on an auth-service record: served by ai, which enforces it on every /v1 call made with the key.
  getKeyMinuteLimits: route({
    method: 'GET',
    url: '/api/keys/:id/limits',
    service: 'ai',
    surfaces: ['web'],
    auth: 'user',
    summary: "The API key's AI requests and tokens per minute, and the plan's caps on them",
    schema: { params: ApiKeyParams, response: { 200: KeyMinuteLimits, ...Errors } },
  }),
  putKeyMinuteLimits: route({
    method: 'PUT',
    url: '/api/keys/:id/limits',
    service: 'ai',
    surfaces: ['web'],
    auth: 'user',
    summary:
      "Sets the API key's AI requests and tokens per minute (null: none), within the plan's caps; beyond them its /v1 calls are answered 429 with Retry-After",
    schema: { params: ApiKeyParams, body: MinuteLimitsInput, response: { 200: KeyMinuteLimits, ...Errors } },
  }),
  validateKey: route({
    method: 'POST',
    url: '/api/keys/validate',
    service: 'auth',
    surfaces: ['web'],
    auth: 'none',
    rateLimit: 'web-key-validate',
    summary: 'Whether a user API key is valid',
    schema: { body: ValidateKeyBody, response: { 200: ValidateKeyResponse, ...Errors } },
  }),
  validateKeyAlias: route({
    method: 'POST',
    url: '/api/validate-key',
    service: 'auth',
    surfaces: ['web'],
    auth: 'none',
    rateLimit: 'web-key-validate',
    summary: 'Whether a user API key is valid (older path of /api/keys/validate)',
    schema: { body: ValidateKeyBody, response: { 200: ValidateKeyResponse, ...Errors } },
  }),
};

export const inviteRoutes = {
  createInvite: route({
    method: 'POST',
    url: '/api/invite',
    service: 'auth',
    surfaces: ['web'],
    auth: 'user',
    summary:
      'Create an invite (64 hex characters) for someone by name (429 INVITE_LIMIT while the user holds the cap of unused ones)',
    schema: { body: CreateInviteBody, response: { 200: CreatedInvite, ...Errors } },
  }),
  verifyInvite: route({
    method: 'POST',
    url: '/api/invites/verify',
    service: 'auth',
    surfaces: ['web'],
    auth: 'none',
    summary: 'Check an invite: 400 bad format, 404 missing or expired, 410 used',
    schema: { body: VerifyInviteBody, response: { 200: VerifiedInvite, ...Errors } },
  }),
  adminListInvites: route({
    method: 'GET',
    url: '/api/admin/invites',
    service: 'auth',
    surfaces: ['web'],
    auth: 'admin',
    summary:
      'Every invite with its status, newest first, in pages of `limit` (default 50, at most 100) from `cursor` (admin only)',
    schema: { querystring: AdminInviteListQuery, response: { 200: AdminInviteList, ...Errors } },
  }),
  adminCreateInvite: route({
    method: 'POST',
    url: '/api/admin/invites',
    service: 'auth',
    surfaces: ['web'],
    auth: 'admin',
    summary:
      'Create an invite for an email address (admin only; 429 INVITE_LIMIT while the admin holds the cap of unused ones)',
    schema: { body: AdminCreateInviteBody, response: { 200: AdminCreatedInvite, ...Errors } },
  }),
  deprecatedGenerate: route({
    method: 'POST',
    url: '/api/invite/generate',
    service: 'auth',
    surfaces: ['web'],
    auth: 'none',
    summary: 'Deprecated (12-character codes): 410, use POST /api/invite',
    schema: { response: { ...Errors } },
  }),
  deprecatedValidate: route({
    method: 'POST',
    url: '/api/invite/validate',
    service: 'auth',
    surfaces: ['web'],
    auth: 'none',
    summary: 'Deprecated (12-character codes): 410, use POST /api/invites/verify',
    schema: { response: { ...Errors } },
  }),
};
