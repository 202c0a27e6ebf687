import { Type } from 'typebox';
import { ErrorBody, Errors, IsoDate, Nullable, Uuid } from './common.ts';
import { NextCursor, PageCursor } from './pagination.ts';
import { route } from './route.ts';

/** Working with a running agent through its own OpenClaw gateway (issue 19): chat, memory and skills. */

/** An agent row id: a UUID (anything else would reach a uuid column). */
const AgentRef = Uuid;
/** A caller's session key: letters, digits and `:_.-` (OpenClaw's reserved `subagent:`, `cron:`, `acp:` are refused by the service). */
export const ChatSessionKey = Type.String({ minLength: 1, maxLength: 200, pattern: '^[A-Za-z0-9:_.-]+$' });

// ── Chat ──────────────────────────────────────────────────────────────────────────────────────
export const AgentChatBody = Type.Object(
  {
    agentId: AgentRef,
    message: Type.String({ minLength: 1, maxLength: 32_000 }),
    sessionKey: Type.Optional(ChatSessionKey),
    stream: Type.Optional(
      Type.Boolean({ description: 'answer as Server-Sent Events (as `Accept: text/event-stream` does)' }),
    ),
  },
  { additionalProperties: false },
);
export const AgentChatUsage = Type.Object({
  promptTokens: Type.Integer(),
  completionTokens: Type.Integer(),
  totalTokens: Type.Integer(),
});
export const AgentChatReply = Type.Object({
  id: Type.String(),
  agentId: Type.String(),
  sessionKey: Type.String(),
  message: Type.Object({ role: Type.Literal('assistant'), content: Type.String() }),
  usage: Type.Optional(AgentChatUsage),
});
export const AgentChatHistoryQuery = Type.Object(
  {
    agentId: AgentRef,
    sessionKey: Type.Optional(ChatSessionKey),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
    cursor: Type.Optional(PageCursor),
  },
  { additionalProperties: false },
);
export const AgentChatMessage = Type.Object({
  role: Type.String(),
  content: Type.String(),
  createdAt: Nullable(IsoDate),
});
export const AgentChatHistory = Type.Object({
  agentId: Type.String(),
  sessionKey: Type.String(),
  messages: Type.Array(AgentChatMessage),
  nextCursor: NextCursor,
});

// ── Memory ────────────────────────────────────────────────────────────────────────────────────
/** A memory file: `memory/<name>.md` (one level, no `..`; the service also refuses anything else). */
export const MemoryPath = Type.String({ minLength: 1, maxLength: 200, description: 'memory/<name>.md' });
export const MemoryQuery = Type.Object(
  { agentId: AgentRef, path: Type.Optional(MemoryPath) },
  { additionalProperties: false },
);
export const MemoryFileMeta = Type.Object({ path: Type.String(), size: Type.Integer(), updatedAt: Nullable(IsoDate) });
export const MemoryView = Type.Object({
  agentId: Type.String(),
  memory: Type.String(),
  files: Type.Array(MemoryFileMeta),
});
export const MemoryFile = Type.Object({
  agentId: Type.String(),
  path: Type.String(),
  content: Type.String(),
  size: Type.Integer(),
  updatedAt: Nullable(IsoDate),
});
export const MemoryWriteBody = Type.Object(
  {
    agentId: AgentRef,
    path: Type.Optional(MemoryPath),
    content: Type.String({ maxLength: 1_048_576 }),
  },
  { additionalProperties: false },
);
export const MemoryWritten = Type.Object({
  agentId: Type.String(),
  path: Type.String(),
  size: Type.Integer(),
  updatedAt: Nullable(IsoDate),
});
export const MemoryDeleteQuery = Type.Object({ agentId: AgentRef, path: MemoryPath }, { additionalProperties: false });
export const MemoryDeleted = Type.Object({ deleted: Type.Literal(true), agentId: Type.String(), path: Type.String() });

// ── Skills ────────────────────────────────────────────────────────────────────────────────────
/** A skill's name: its folder under `<workspace>/skills/` for a custom one, or a bundled skill's name. */
export const SkillName = Type.String({ minLength: 1, maxLength: 64, pattern: '^[a-z0-9-]{1,64}$' });
export const SKILL_MD_MAX_BYTES = 65_536;
export const SkillsQuery = Type.Object({ agentId: AgentRef }, { additionalProperties: false });
export const InstalledSkill = Type.Object({
  name: Type.String(),
  enabled: Type.Boolean(),
  source: Type.String({ description: 'where the gateway loaded it from: `openclaw-bundled`, `openclaw-workspace`, …' }),
  description: Type.String(),
});
export const AvailableSkill = Type.Object({ name: Type.String(), description: Type.String() });
export const SkillList = Type.Object({
  agentId: Type.String(),
  installed: Type.Array(InstalledSkill),
  available: Type.Array(AvailableSkill),
  limit: Type.Integer(),
});
export const SkillInstallBody = Type.Object(
  {
    agentId: AgentRef,
    name: SkillName,
    skillMd: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: SKILL_MD_MAX_BYTES,
        description:
          "a custom skill's SKILL.md (frontmatter `name`, `description`); without it, `name` is a bundled skill",
      }),
    ),
  },
  { additionalProperties: false },
);
export const SkillRemoveBody = Type.Object({ agentId: AgentRef, name: SkillName }, { additionalProperties: false });
export const SkillRemoved = Type.Object({ deleted: Type.Literal(true), agentId: Type.String(), name: Type.String() });

export const agentWorkRoutes = {
  chat: route({
    method: 'POST',
    url: '/api/chat',
    service: 'agents',
    surfaces: ['web'],
    auth: 'user',
    rateLimit: 'web-chat',
    longLived: true,
    summary:
      "One chat turn with a running agent in the caller's web session (`agentyard:web:<userId>` unless `sessionKey`); `Accept: text/event-stream` or `stream:true` streams it as SSE ending in `done`; 409 AGENT_NOT_RUNNING, 504 on gateway timeout",
    schema: { body: AgentChatBody, response: { 200: AgentChatReply, ...Errors, 504: ErrorBody } },
  }),
  gatewayChat: route({
    method: 'POST',
    url: '/api/gateway/chat',
    service: 'agents',
    surfaces: ['web'],
    auth: 'user',
    rateLimit: 'web-chat',
    longLived: true,
    summary: 'The same chat turn as POST /api/chat',
    schema: { body: AgentChatBody, response: { 200: AgentChatReply, ...Errors, 504: ErrorBody } },
  }),
  chatHistory: route({
    method: 'GET',
    url: '/api/chat',
    service: 'agents',
    surfaces: ['web'],
    auth: 'user',
    rateLimit: 'web-chat',
    summary:
      "The web session's messages as the agent's gateway keeps them, newest last, in pages of `limit` going back from `cursor`",
    schema: { querystring: AgentChatHistoryQuery, response: { 200: AgentChatHistory, ...Errors, 504: ErrorBody } },
  }),
  memory: route({
    method: 'GET',
    url: '/api/memory',
    service: 'agents',
    surfaces: ['web'],
    auth: 'user',
    rateLimit: 'web-agent-workspace',
    summary: "The agent's MEMORY.md and its memory/*.md files; with `path=memory/<name>.md`, that file",
    schema: {
      querystring: MemoryQuery,
      response: { 200: Type.Union([MemoryView, MemoryFile]), ...Errors, 504: ErrorBody },
    },
  }),
  writeMemory: route({
    method: 'PUT',
    url: '/api/memory',
    service: 'agents',
    surfaces: ['web'],
    auth: 'user',
    rateLimit: 'web-agent-workspace',
    summary:
      "Replace the agent's MEMORY.md (the agent reads it on its next turn), or with `path=memory/<name>.md` write that memory file",
    schema: { body: MemoryWriteBody, response: { 200: MemoryWritten, ...Errors, 504: ErrorBody } },
  }),
  deleteMemory: route({
    method: 'DELETE',
    url: '/api/memory',
    service: 'agents',
    surfaces: ['web'],
    auth: 'user',
    rateLimit: 'web-agent-workspace',
    summary: 'Delete one memory/<name>.md file of the agent',
    schema: { querystring: MemoryDeleteQuery, response: { 200: MemoryDeleted, ...Errors } },
  }),
  skills: route({
    method: 'GET',
    url: '/api/skills',
    service: 'agents',
    surfaces: ['web'],
    auth: 'user',
    rateLimit: 'web-agent-workspace',
    summary:
      "The skills the agent's gateway has installed (custom ones and bundled ones switched on), the bundled skills of its OpenClaw still available, and the plan's skill limit",
    schema: { querystring: SkillsQuery, response: { 200: SkillList, ...Errors, 504: ErrorBody } },
  }),
  installSkill: route({
    method: 'POST',
    url: '/api/skills',
    service: 'agents',
    surfaces: ['web'],
    auth: 'user',
    rateLimit: 'web-agent-workspace',
    summary:
      "Switch on a bundled skill, or with `skillMd` write a custom one to `<workspace>/skills/<name>/SKILL.md`; enabled on the running gateway without a restart; 429 SKILL_LIMIT over the plan's skill limit",
    schema: { body: SkillInstallBody, response: { 200: SkillList, ...Errors, 504: ErrorBody } },
  }),
  removeSkill: route({
    method: 'DELETE',
    url: '/api/skills',
    service: 'agents',
    surfaces: ['web'],
    auth: 'user',
    rateLimit: 'web-agent-workspace',
    summary: 'Remove a custom skill, or switch a bundled one off',
    schema: { body: SkillRemoveBody, response: { 200: SkillRemoved, ...Errors, 504: ErrorBody } },
  }),
  controlUi: route({
    method: 'GET',
    url: '/api/control-ui/:agentId/*',
    service: 'agents',
    surfaces: ['web'],
    auth: 'user',
    rateLimit: 'web-control-ui',
    websocket: true,
    summary:
      "The agent's own OpenClaw Control UI for its owner: its page, files and runtime config from the platform's own copy of the Control UI (never from the agent), and its WebSocket, relayed to the gateway, which the platform authenticates to (the browser never holds the gateway token); 409 AGENT_NOT_RUNNING; 503 when the platform has no copy",
    schema: {
      params: Type.Object({ agentId: Uuid, '*': Type.String() }),
      response: {
        200: Type.String({
          description: "a page or file of the platform's copy of the Control UI, or its runtime config (JSON)",
        }),
        ...Errors,
        504: ErrorBody,
      },
    },
  }),
  controlUiSocket: route({
    method: 'GET',
    url: '/api/control-ui/:agentId',
    service: 'agents',
    surfaces: ['web'],
    auth: 'user',
    rateLimit: 'web-control-ui',
    websocket: true,
    summary:
      'Where the Control UI opens its WebSocket (its base path); a plain GET is redirected to the page (`/api/control-ui/:agentId/`)',
    schema: {
      params: Type.Object({ agentId: Uuid }),
      response: { 200: Type.String(), 302: Type.Null(), ...Errors, 504: ErrorBody },
    },
  }),
};
