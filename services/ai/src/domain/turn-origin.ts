/**
 * Which channel started the turn a hosted agent's model call serves (mission control's `channel`
 * runs, issue 32). OpenClaw (2026.9.6) ends every turn's system prompt with one line
 * `Runtime: agent=main | session=<session key> | … | channel=<channel> | …`. On the OpenAI chat wire it
 * moves that line to the end of the first user message after the system message (the system prompt
 * stays cacheable); on Anthropic's Messages wire it stays at the end of `system`.
 *
 * A turn is a channel's when the line names a messaging channel and the session is a conversation on
 * it: OpenClaw keys those `agent:<agent>:<channel>:…` (groups, and direct messages under the
 * platform's `per-channel-peer` scope) or `agent:<agent>:direct:<peer>` (direct messages under
 * `per-peer`). The console's chat (`webchat`, session `agentyard:web:…`), hooks (`hook:…`,
 * `scheduled:…`) and the agent's own heartbeat (its main session) are not.
 *
 * The agent writes this line, so it is trusted for one thing only: labelling its owner's own usage
 * rows. The agent and its owner are already known by the agent's key; no price, budget, limit or
 * access depends on the label.
 */

const CHANNEL_NAME = /^[a-z][a-z0-9-]{0,31}$/;
const RUNTIME_LINE = /^Runtime: (.+)$/gm;

const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The text of a message's content: a string, or the text parts of a list of parts. */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter((part): part is { text: string } => isRecord(part) && typeof part.text === 'string')
    .map((part) => part.text)
    .join('\n');
}

/** The last `Runtime:` line of a text (the one OpenClaw wrote after anything quoted before it). */
function lastRuntimeLine(text: string): string | undefined {
  let last: string | undefined;
  for (const match of text.matchAll(RUNTIME_LINE)) last = match[1];
  return last;
}

/** The channel a runtime line's turn came in on, or null. */
function channelOfRuntime(line: string | undefined): string | null {
  if (!line) return null;
  const fields = new Map(
    line.split(' | ').map((field) => {
      const at = field.indexOf('=');
      return [field.slice(0, at), field.slice(at + 1)] as const;
    }),
  );
  const channel = fields.get('channel')?.trim();
  const [head, , scope] = (fields.get('session') ?? '').trim().split(':');
  if (!channel || !CHANNEL_NAME.test(channel) || channel === 'webchat' || head !== 'agent') return null;
  return scope === channel || scope === 'direct' ? channel : null;
}

/** The OpenAI chat wire: the system (or developer) message's line, else the one appended last to the first user message after it. */
export function channelOfChatTurn(messages: unknown): string | null {
  if (!Array.isArray(messages)) return null;
  const systemAt = messages.findIndex((m) => isRecord(m) && (m.role === 'system' || m.role === 'developer'));
  if (systemAt < 0) return null;
  const inSystem = lastRuntimeLine(textOf(messages[systemAt].content));
  if (inSystem) return channelOfRuntime(inSystem);
  const firstUser = messages.slice(systemAt + 1).find((m) => isRecord(m) && m.role === 'user');
  if (!isRecord(firstUser)) return null;
  const lines = textOf(firstUser.content).trimEnd().split('\n');
  const last = lines[lines.length - 1] ?? '';
  return channelOfRuntime(lastRuntimeLine(last));
}

/** Anthropic's Messages wire: the line at the end of `system` (a string or text blocks). */
export function channelOfMessagesTurn(body: Record<string, unknown>): string | null {
  return channelOfRuntime(lastRuntimeLine(textOf(body.system)));
}
