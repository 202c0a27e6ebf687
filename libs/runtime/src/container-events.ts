import type { Readable } from 'node:stream';
import type Docker from 'dockerode';
import { type ContainerEvent, RuntimeError } from './driver.ts';

/** A line of the event stream longer than this is no event of ours: it is dropped, never buffered on. */
const MAX_EVENT_BYTES = 64 * 1024;

interface EngineEvent {
  Type?: string;
  Action?: string;
  id?: string;
  time?: number;
  timeNano?: number;
  Actor?: { ID?: string; Attributes?: Record<string, string> };
}

/**
 * One engine event as the driver reports it; null for what the watchdog does not follow. `line` is
 * its JSON text: nanoseconds since the epoch do not fit a number, so its time is read from the text.
 */
export function containerEventOf(
  raw: EngineEvent,
  agentIdOf: (name: string | undefined) => string,
  line = '',
): ContainerEvent | null {
  if (raw.Type !== 'container' || !raw.Action) return null;
  const attributes = raw.Actor?.Attributes ?? {};
  const containerId = raw.Actor?.ID ?? raw.id ?? '';
  if (!containerId) return null;
  // Docker says `health_status: healthy`; Podman `health_status` with the status in an attribute.
  const [action, health] = raw.Action.split(':').map((s) => s.trim()) as [string, string | undefined];
  const kind = action === 'die' ? 'die' : action === 'oom' ? 'oom' : action === 'health_status' ? 'health' : null;
  if (!kind) return null;
  const code = attributes.exitCode ?? attributes.containerExitCode;
  return {
    containerId,
    agentId: agentIdOf(attributes.name),
    kind,
    time: /"timeNano":\s*(\d+)/.exec(line)?.[1] ?? `${raw.time ?? 0}000000000`,
    exitCode: kind === 'die' && code !== undefined && /^\d+$/.test(code) ? Number(code) : null,
    ...(kind === 'health' ? { health: health ?? attributes.health_status ?? '' } : {}),
  };
}

/**
 * The engine's events about containers labelled `instance=<value>` (the engine's stream: no polling),
 * until `signal` aborts. `connectTimeoutMs` bounds the wait for the engine to answer; the stream then
 * stays open as long as the engine keeps it. Ends when the engine closes it.
 */
export async function* followContainerEvents(
  docker: Docker,
  label: string,
  signal: AbortSignal,
  connectTimeoutMs: number,
  agentIdOf: (name: string | undefined) => string,
  onOpen?: () => void,
): AsyncGenerator<ContainerEvent> {
  const engine = new AbortController();
  const abort = () => engine.abort();
  signal.addEventListener('abort', abort, { once: true });
  const timer = setTimeout(abort, connectTimeoutMs);
  let body: Readable;
  try {
    // No `event` filter: Podman 4.3 matches it against its own names (`died`), so `die` gets nothing; the rest is dropped here.
    body = (await docker.getEvents({
      filters: { type: ['container'], label: [label] },
      abortSignal: engine.signal,
    } as Docker.GetEventsOptions)) as unknown as Readable;
  } catch (error) {
    signal.removeEventListener('abort', abort);
    if (signal.aborted) return;
    throw new RuntimeError('container engine: events failed', { cause: error });
  } finally {
    clearTimeout(timer);
  }
  onOpen?.();
  let partial = '';
  try {
    for await (const chunk of body) {
      const lines = (partial + (chunk as Buffer).toString('utf8')).split('\n');
      partial = lines.pop()!;
      if (partial.length > MAX_EVENT_BYTES) partial = '';
      for (const line of lines) {
        if (!line.trim()) continue;
        let raw: EngineEvent;
        try {
          raw = JSON.parse(line) as EngineEvent;
        } catch {
          continue;
        }
        const event = containerEventOf(raw, agentIdOf, line);
        if (event) yield event;
      }
    }
  } catch (error) {
    if (!signal.aborted) throw new RuntimeError('container engine: event stream broke off', { cause: error });
  } finally {
    signal.removeEventListener('abort', abort);
    body.destroy();
    engine.abort();
  }
}
