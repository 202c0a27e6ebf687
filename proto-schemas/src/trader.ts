import { Type } from 'typebox';
import { Errors, Success } from './common.ts';
import { route } from './route.ts';

export const TraderKeyStatus = Type.Object({ configured: Type.Boolean() });
export const TraderKeyBody = Type.Object(
  { apiKey: Type.String({ minLength: 1, maxLength: 512, pattern: '\\S' }) },
  { additionalProperties: false },
);
export const TraderBalancesQuery = Type.Object(
  {
    chains: Type.Optional(Type.String({ pattern: '^[a-z0-9-]{1,32}(,[a-z0-9-]{1,32}){0,19}$' })),
  },
  { additionalProperties: false },
);
export const TraderPromptBody = Type.Object(
  {
    prompt: Type.String({ minLength: 1, maxLength: 10000 }),
    threadId: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  },
  { additionalProperties: false },
);
/** The trading service's job ids: letters, digits, `_` and `-` (never `.` or `/`, which would read as a path upstream). */
export const TraderJobQuery = Type.Object(
  { jobId: Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9_-]+$' }) },
  { additionalProperties: false },
);
/** The trading service's own answer, relayed as it came (its shape is the service's). */
export const TraderUpstreamBody = Type.Unknown();

export const traderRoutes = {
  keyStatus: route({
    method: 'GET',
    url: '/api/user/trader-key',
    service: 'trader',
    surfaces: ['web'],
    auth: 'user',
    summary: 'Whether the user has a personal trading-service key',
    schema: { response: { 200: TraderKeyStatus, ...Errors } },
  }),
  saveKey: route({
    method: 'POST',
    url: '/api/user/trader-key',
    service: 'trader',
    surfaces: ['web'],
    auth: 'user',
    summary: "Store (or replace) the user's trading-service key, encrypted at rest",
    schema: { body: TraderKeyBody, response: { 200: Success, ...Errors } },
  }),
  deleteKey: route({
    method: 'DELETE',
    url: '/api/user/trader-key',
    service: 'trader',
    surfaces: ['web'],
    auth: 'user',
    summary: "Remove the user's trading-service key",
    schema: { response: { 200: Success, ...Errors } },
  }),
  balances: route({
    method: 'GET',
    url: '/api/trader/balances',
    service: 'trader',
    surfaces: ['web'],
    auth: 'user',
    rateLimit: 'web-trader',
    summary: 'Balances by chain from the trading service (own key, else the platform key for paid plans and admins)',
    schema: { querystring: TraderBalancesQuery, response: { 200: TraderUpstreamBody, ...Errors } },
  }),
  prompt: route({
    method: 'POST',
    url: '/api/trader/prompt',
    service: 'trader',
    surfaces: ['web'],
    auth: 'user',
    rateLimit: 'web-trader',
    summary: 'Send a prompt to the trading service; answers with its job',
    schema: { body: TraderPromptBody, response: { 200: TraderUpstreamBody, ...Errors } },
  }),
  jobStatus: route({
    method: 'GET',
    url: '/api/trader/prompt',
    service: 'trader',
    surfaces: ['web'],
    auth: 'user',
    rateLimit: 'web-trader',
    badRequest: { all: 'jobId is required: letters, digits, _ and - only' },
    summary: "Status of a trading-service job the user started (another user's platform-key job: 404)",
    schema: { querystring: TraderJobQuery, response: { 200: TraderUpstreamBody, ...Errors } },
  }),
};
