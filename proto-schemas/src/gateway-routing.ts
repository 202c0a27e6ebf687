import { Type } from 'typebox';
import { ErrorBody, Errors, IsoDate, Uuid } from './common.ts';
import { route } from './route.ts';

/** Gateway routing (`POST /api/v1/gateway`) and the summarizer (`/api/summarize`, `/api/extract`): issue 32. */

/** The plugins the gateway dispatches to. */
export const GATEWAY_PLUGINS = ['agent', 'generate-text', 'summarize'] as const;
export type GatewayPluginName = (typeof GATEWAY_PLUGINS)[number];

/** A plugin's name as a caller may spell it (the service answers 400 UNKNOWN_PLUGIN for one it does not serve). */
export const PluginName = Type.String({ minLength: 1, maxLength: 64, pattern: '^[a-z0-9][a-z0-9._-]*$' });

/** A URL a user names for the platform to fetch: http(s) only (the fetcher refuses private addresses too). */
export const FetchUrl = Type.String({
  minLength: 8,
  maxLength: 2048,
  pattern: '^[Hh][Tt][Tt][Pp][Ss]?://[^\\s]+$',
  description: 'an http or https URL of a public page',
});

export const GatewayRequest = Type.Object(
  {
    plugin: Type.Optional({
      ...PluginName,
      description: '`agent`, `generate-text` or `summarize`; else the `x-plugin-id` header names it',
    }),
    agentId: Type.Optional({ ...Uuid, description: 'the agent that answers (`agent` only)' }),
    input: Type.String({
      minLength: 1,
      maxLength: 32_000,
      description: "the message to the agent, the prompt, or the page's URL (`summarize`)",
    }),
    model: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 128,
        description: '`generate-text`: a model of the plan (default: the plan picks)',
      }),
    ),
    maxTokens: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 8192,
        description: '`generate-text` and `summarize`: the longest answer, in tokens',
      }),
    ),
  },
  { additionalProperties: false },
);
export const GatewayHeaders = Type.Object({ 'x-plugin-id': Type.Optional(PluginName) });

export const GatewayUsage = Type.Object({
  promptTokens: Type.Integer(),
  completionTokens: Type.Integer(),
  totalTokens: Type.Integer(),
});

/** What a gateway call cost its caller: the plugin's fee, where it came from, and the credits left. */
export const GatewayPayment = Type.Object({
  method: Type.Union([Type.Literal('allowance'), Type.Literal('credits'), Type.Literal('none')], {
    description:
      "`allowance`: within the plan's monthly AI allowance; `credits`: (partly) from the credits ledger; `none`: not charged (admins)",
  }),
  chargedUsd: Type.Number({
    description: "the plugin's fee; the AI spend of the call itself is billed as every AI call is",
  }),
  balanceUsd: Type.Number({ description: 'the credits balance after this call' }),
});

export const GatewayAnswer = Type.Object({
  id: Type.String(),
  plugin: Type.String(),
  output: Type.String({ description: "the agent's answer, the generated text, or the page's summary" }),
  agentId: Type.Optional(Type.String()),
  model: Type.Optional(Type.String()),
  url: Type.Optional(Type.String({ description: '`summarize`: the page read, after redirects' })),
  usage: Type.Optional(GatewayUsage),
  payment: GatewayPayment,
});

// ── Summarizer ────────────────────────────────────────────────────────────────────────────────
export const SummarizeRequest = Type.Object(
  {
    url: FetchUrl,
    summary: Type.Optional(
      Type.Boolean({ description: "also a short summary by the AI gateway, under the caller's plan and budget" }),
    ),
  },
  { additionalProperties: false },
);
export const ExtractRequest = Type.Object({ url: FetchUrl }, { additionalProperties: false });

export const PageHeading = Type.Object({ level: Type.Integer({ minimum: 1, maximum: 6 }), text: Type.String() });
export const PageSummary = Type.Object({
  url: Type.String({ description: 'the page read, after redirects' }),
  title: Type.String(),
  description: Type.String(),
  headings: Type.Array(PageHeading),
  paragraphs: Type.Array(Type.String()),
  wordCount: Type.Integer(),
  fetchedAt: IsoDate,
  summary: Type.Optional(Type.String()),
  model: Type.Optional(Type.String()),
  usage: Type.Optional(GatewayUsage),
});
export const PageExtract = Type.Object({
  url: Type.String(),
  links: Type.Array(Type.Object({ href: Type.String(), text: Type.String() })),
  images: Type.Array(Type.Object({ src: Type.String(), alt: Type.String() })),
  meta: Type.Record(Type.String(), Type.String()),
  fetchedAt: IsoDate,
});

/** Answers of routes that fetch a page or run a paid AI call, beside the common ones. */
const PageErrors = { ...Errors, 402: ErrorBody, 415: ErrorBody, 504: ErrorBody };

export const gatewayRoutingRoutes = {
  gateway: route({
    method: 'POST',
    url: '/api/v1/gateway',
    service: 'ai',
    surfaces: ['web'],
    auth: 'user',
    rateLimit: 'web-gateway',
    summary:
      "One call dispatched to a plugin: `agent` (a turn of the caller's agent), `generate-text` (the AI gateway) or `summarize` (a page, read and summarized); paid by the plan's allowance or credits, the fee in `payment`. 400 UNKNOWN_PLUGIN, 402 when neither covers it",
    schema: { body: GatewayRequest, headers: GatewayHeaders, response: { 200: GatewayAnswer, ...PageErrors } },
  }),
  summarize: route({
    method: 'POST',
    url: '/api/summarize',
    service: 'ai',
    surfaces: ['web'],
    auth: 'user',
    rateLimit: 'web-summarizer',
    summary:
      "Reads a public page (http/https, no private addresses, 2 MB, HTML only): its title, description, headings and paragraphs; `summary:true` adds a short summary under the caller's plan and budget",
    schema: { body: SummarizeRequest, response: { 200: PageSummary, ...PageErrors } },
  }),
  extract: route({
    method: 'POST',
    url: '/api/extract',
    service: 'ai',
    surfaces: ['web'],
    auth: 'user',
    rateLimit: 'web-summarizer',
    summary: "A public page's links, images and meta tags, references made absolute",
    schema: { body: ExtractRequest, response: { 200: PageExtract, ...PageErrors } },
  }),
};
