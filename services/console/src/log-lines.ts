// The agent's output as the logs page keeps it: the history and the live stream merged in time
// order. The engine counts `since` in whole seconds, so the stream may send again lines of the
// second it opened; those are dropped here. Plain functions, tested without a browser.
import type { AgentLogLine } from './types.ts';

/** How many lines the page keeps (the oldest go first): a long-running stream must not grow without end. */
export const KEPT_LINES = 2000;

const keyOf = (line: AgentLogLine) => `${line.time}\u0000${line.stream}\u0000${line.text}`;

/** `kept` and `incoming` as one list, oldest first, each line once, at most `max` of the newest. */
export function mergeLogLines(
  kept: readonly AgentLogLine[],
  incoming: readonly AgentLogLine[],
  max = KEPT_LINES,
): AgentLogLine[] {
  if (incoming.length === 0) return kept as AgentLogLine[];
  const seen = new Set(kept.map(keyOf));
  const added = incoming.filter((line) => {
    const key = keyOf(line);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  if (added.length === 0) return kept as AgentLogLine[];
  const last = kept.at(-1);
  // The usual case, new lines after the last: no sort. Sorting is stable, so lines of one instant keep their order.
  const merged =
    !last || added.every((line) => line.time >= last.time)
      ? [...kept, ...added]
      : [...kept, ...added].sort((a, b) => (a.time < b.time ? -1 : a.time > b.time ? 1 : 0));
  return merged.length > max ? merged.slice(merged.length - max) : merged;
}

/** A log line from one `event: line` message's data, or undefined for anything else. */
export function parseLogLine(data: string): AgentLogLine | undefined {
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    return undefined;
  }
  const line = value as Partial<AgentLogLine> | null;
  if (
    typeof line?.time !== 'string' ||
    (line.stream !== 'stdout' && line.stream !== 'stderr') ||
    typeof line.text !== 'string'
  )
    return undefined;
  return { time: line.time, stream: line.stream, text: line.text };
}

/** The message of an `event: error` the log stream sends when the engine breaks off. */
export function streamErrorOf(data: string): string {
  try {
    const value = JSON.parse(data) as { error?: unknown } | null;
    if (typeof value?.error === 'string' && value.error) return value.error;
  } catch {
    /* not JSON: the generic words below */
  }
  return 'The live output stopped';
}

// CSI sequences (colours, cursor moves) and OSC ones (titles, links), then any other lone escape.
// biome-ignore lint/suspicious/noControlCharactersInRegex: the escape characters are what is removed
const ESCAPES = /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)|\u001b/g;

/** A line without its terminal escape sequences (OpenClaw colours its output): the page shows the text. */
export function plainText(text: string): string {
  return text.replace(ESCAPES, '');
}
