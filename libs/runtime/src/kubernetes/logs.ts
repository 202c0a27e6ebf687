import { Writable } from 'node:stream';
import { Log } from '@kubernetes/client-node';
import { type LogLine, RuntimeError } from '../driver.ts';
import { type Cluster, call, codeOf } from './cluster.ts';
import { CONTAINER, podOf } from './manifests.ts';

/** `2026-11-27T17:01:02.123456789Z text` (kubelet's timestamps=true) as a log line. */
function logLineOf(line: string): LogLine | null {
  if (!line) return null;
  const space = line.indexOf(' ');
  if (space < 0) return { time: line, stream: 'stdout', text: '' };
  // The API does not say which stream a line came from.
  return { time: line.slice(0, space), stream: 'stdout', text: line.slice(space + 1) };
}

/** The gateway's last `tail` lines, oldest first. */
export async function readPodLogs(k: Cluster, name: string, tail: number): Promise<LogLine[]> {
  const text = await k.core
    .readNamespacedPodLog(
      { name: podOf(name), namespace: k.namespace, container: CONTAINER, tailLines: tail, timestamps: true },
      k.timed,
    )
    .catch((error: unknown) => {
      // No pod (stopped) or no container yet: nothing written.
      if (codeOf(error) === 404 || codeOf(error) === 400) return '';
      throw error;
    });
  return text.split('\n').flatMap((line) => logLineOf(line) ?? []);
}

/** The gateway's new lines as the API streams them, until `signal` aborts or the stream ends. */
export async function* followPodLogs(k: Cluster, name: string, signal: AbortSignal): AsyncIterable<LogLine> {
  const lines: LogLine[] = [];
  let wake: (() => void) | undefined;
  let ended = false;
  let failure: unknown;
  let partial = '';
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      const text = partial + chunk.toString('utf8');
      const parts = text.split('\n');
      partial = parts.pop() ?? '';
      for (const part of parts) {
        const line = logLineOf(part);
        if (line) lines.push(line);
      }
      wake?.();
      done();
    },
    final(done) {
      ended = true;
      wake?.();
      done();
    },
  });
  const controller = await call('follow logs', () =>
    new Log(k.kc).log(k.namespace, podOf(name), CONTAINER, sink, { follow: true, timestamps: true, tailLines: 0 }),
  );
  const abort = () => controller.abort();
  signal.addEventListener('abort', abort, { once: true });
  sink.on('error', (error) => {
    failure = error;
    ended = true;
    wake?.();
  });
  try {
    while (!signal.aborted) {
      while (lines.length > 0) yield lines.shift()!;
      if (ended) break;
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
      wake = undefined;
    }
    if (failure && !signal.aborted) throw new RuntimeError('kubernetes: following logs failed', { cause: failure });
  } finally {
    signal.removeEventListener('abort', abort);
    controller.abort();
  }
}
