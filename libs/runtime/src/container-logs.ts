import type { Readable } from 'node:stream';
import type Docker from 'dockerode';
import { RuntimeError, type LogLine } from './driver.ts';

const STREAMS = { 1: 'stdout', 2: 'stderr' } as const;
/** A line longer than this is cut: one line never holds a whole log in memory. */
const MAX_LINE_BYTES = 16 * 1024;

/** `2026-11-25T03:51:00.123456789Z text` (the engine's `timestamps` prefix) as time and text. */
function timedLine(stream: LogLine['stream'], raw: string): LogLine {
  const space = raw.indexOf(' ');
  const stamp = space > 0 ? Date.parse(raw.slice(0, space)) : Number.NaN;
  if (Number.isNaN(stamp)) return { time: new Date().toISOString(), stream, text: raw };
  return { time: new Date(stamp).toISOString(), stream, text: raw.slice(space + 1) };
}

/**
 * Splits the engine's multiplexed log body (8-byte frame headers: stream, 3 zero bytes, length)
 * into lines per stream. Frames may arrive cut anywhere; a line may span frames.
 */
export function logDemultiplexer() {
  let pending: Buffer = Buffer.alloc(0);
  const partial: Record<LogLine['stream'], string> = { stdout: '', stderr: '' };
  const linesOf = (stream: LogLine['stream'], text: string): LogLine[] => {
    const parts = (partial[stream] + text).split('\n');
    partial[stream] = parts.pop()!.slice(-MAX_LINE_BYTES);
    return parts.map((p) => timedLine(stream, p.replace(/\r$/, '').slice(0, MAX_LINE_BYTES)));
  };
  return {
    push(chunk: Buffer): LogLine[] {
      pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
      const out: LogLine[] = [];
      while (pending.length >= 8) {
        const size = pending.readUInt32BE(4);
        if (pending.length < 8 + size) break;
        const stream = STREAMS[pending[0] as 1 | 2];
        const payload = pending.subarray(8, 8 + size).toString('utf8');
        pending = pending.subarray(8 + size);
        if (stream) out.push(...linesOf(stream, payload));
      }
      return out;
    },
    /** What is left once the body ended: a last line without its newline. */
    end(): LogLine[] {
      return (['stdout', 'stderr'] as const).filter((s) => partial[s]).map((s) => timedLine(s, partial[s]));
    },
  };
}

/** The container's last `tail` lines of output, oldest first. */
export async function readContainerLogs(docker: Docker, id: string, tail: number): Promise<LogLine[]> {
  const body = (await docker.getContainer(id).logs({ stdout: true, stderr: true, timestamps: true, tail, follow: false })) as unknown as Buffer;
  const demux = logDemultiplexer();
  const lines = [...demux.push(body), ...demux.end()];
  // Both streams are read from one body in write order; the timestamps order them where frames interleave.
  return lines.sort((a, b) => a.time.localeCompare(b.time)).slice(-tail);
}

/**
 * New lines of the container's output as it writes them (the engine's follow mode: no polling),
 * until `signal` aborts, which closes the engine's stream. `connectTimeoutMs` bounds the wait for
 * the engine to answer; the stream itself may then stay quiet for as long as the agent is.
 */
export async function* followContainerLogs(docker: Docker, id: string, signal: AbortSignal, connectTimeoutMs: number): AsyncGenerator<LogLine> {
  const engine = new AbortController();
  const abort = () => engine.abort();
  signal.addEventListener('abort', abort, { once: true });
  const timer = setTimeout(abort, connectTimeoutMs);
  let body: Readable;
  try {
    body = (await docker
      .getContainer(id)
      .logs({ stdout: true, stderr: true, timestamps: true, follow: true, since: Math.floor(Date.now() / 1000), abortSignal: engine.signal })) as unknown as Readable;
  } catch (error) {
    signal.removeEventListener('abort', abort);
    if (signal.aborted) return;
    throw new RuntimeError('container engine: logs failed', { cause: error });
  } finally {
    clearTimeout(timer);
  }
  const demux = logDemultiplexer();
  try {
    for await (const chunk of body) {
      // `since` counts in seconds (and Podman's timestamps too): lines of the second the follow began may come again.
      for (const line of demux.push(chunk as Buffer)) yield line;
    }
    for (const line of demux.end()) yield line;
  } catch (error) {
    if (!signal.aborted) throw new RuntimeError('container engine: log stream broke off', { cause: error });
  } finally {
    signal.removeEventListener('abort', abort);
    body.destroy();
    engine.abort();
  }
}
