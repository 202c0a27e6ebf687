import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import type Docker from 'dockerode';
import { type LogLine, RuntimeError } from './driver.ts';

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
 * into lines per stream. Frames may arrive cut anywhere; a line may span frames. A frame's payload
 * is read as it arrives, never waited for whole: the agent decides how long its writes are.
 */
export function logDemultiplexer() {
  let header: Buffer = Buffer.alloc(0);
  let stream: LogLine['stream'] | undefined;
  let left = 0;
  const decoders = { stdout: new StringDecoder('utf8'), stderr: new StringDecoder('utf8') };
  const partial: Record<LogLine['stream'], string> = { stdout: '', stderr: '' };
  const linesOf = (stream: LogLine['stream'], text: string): LogLine[] => {
    const parts = (partial[stream] + text).split('\n');
    partial[stream] = parts.pop()!.slice(-MAX_LINE_BYTES);
    return parts.map((p) => timedLine(stream, p.replace(/\r$/, '').slice(0, MAX_LINE_BYTES)));
  };
  return {
    push(chunk: Buffer): LogLine[] {
      const out: LogLine[] = [];
      let at = 0;
      while (at < chunk.length) {
        if (left === 0 && header.length < 8) {
          const take = Math.min(8 - header.length, chunk.length - at);
          header = Buffer.concat([header, chunk.subarray(at, at + take)]);
          at += take;
          if (header.length < 8) break;
          stream = STREAMS[header[0] as 1 | 2];
          left = header.readUInt32BE(4);
          header = Buffer.alloc(0);
          continue;
        }
        const take = Math.min(left, chunk.length - at);
        const payload = chunk.subarray(at, at + take);
        at += take;
        left -= take;
        if (stream) out.push(...linesOf(stream, decoders[stream].write(payload)));
      }
      return out;
    },
    /** What is left once the body ended: a last line without its newline. */
    end(): LogLine[] {
      return (['stdout', 'stderr'] as const).filter((s) => partial[s]).map((s) => timedLine(s, partial[s]));
    },
  };
}

/**
 * The most one history read takes from the engine: more than either engine keeps of a container's
 * output (Docker three files of 10 MB, Podman one), so only a log bloated past that is cut short.
 */
export const LOG_HISTORY_MAX_BYTES = 64 * 1024 * 1024;

/**
 * The container's last `tail` lines of output, oldest first. The engine's answer is read as a stream
 * (never buffered whole: lines are as long as the agent likes) into a FIFO of `tail` lines of at most
 * 16 KB each, and reading stops after `maxBytes`, keeping the lines read until then.
 */
export async function readContainerLogs(
  docker: Docker,
  id: string,
  tail: number,
  maxBytes = LOG_HISTORY_MAX_BYTES,
): Promise<LogLine[]> {
  const body = await new Promise<Readable>((resolve, reject) =>
    docker.modem.dial(
      {
        path: `/containers/${id}/logs?`,
        method: 'GET',
        isStream: true,
        statusCodes: { 200: true, 404: 'no such container', 500: 'server error' },
        options: { stdout: true, stderr: true, timestamps: true, tail, follow: false },
      },
      (error: unknown, stream: unknown) => (error ? reject(error) : resolve(stream as Readable)),
    ),
  );
  const demux = logDemultiplexer();
  let kept: LogLine[] = [];
  const keep = (lines: LogLine[]) => {
    kept.push(...lines);
    // Trimmed in batches: the FIFO never holds more than twice `tail` lines.
    if (kept.length > 2 * tail) kept = kept.slice(-tail);
  };
  let read = 0;
  try {
    for await (const chunk of body) {
      const room = maxBytes - read;
      keep(demux.push(chunk.length > room ? (chunk as Buffer).subarray(0, room) : (chunk as Buffer)));
      read += (chunk as Buffer).length;
      if (read >= maxBytes) break;
    }
  } finally {
    body.destroy();
  }
  keep(demux.end());
  // Both streams are read from one body in write order; the timestamps order them where frames interleave.
  return kept.sort((a, b) => a.time.localeCompare(b.time)).slice(-tail);
}

/**
 * New lines of the container's output as it writes them (the engine's follow mode: no polling),
 * until `signal` aborts, which closes the engine's stream. `connectTimeoutMs` bounds the wait for
 * the engine to answer; the stream itself may then stay quiet for as long as the agent is.
 */
export async function* followContainerLogs(
  docker: Docker,
  id: string,
  signal: AbortSignal,
  connectTimeoutMs: number,
): AsyncGenerator<LogLine> {
  const engine = new AbortController();
  const abort = () => engine.abort();
  signal.addEventListener('abort', abort, { once: true });
  const timer = setTimeout(abort, connectTimeoutMs);
  let body: Readable;
  try {
    body = (await docker.getContainer(id).logs({
      stdout: true,
      stderr: true,
      timestamps: true,
      follow: true,
      since: Math.floor(Date.now() / 1000),
      abortSignal: engine.signal,
    })) as unknown as Readable;
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
