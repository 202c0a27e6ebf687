// Loaded into the services by the benchmark (--import, with --expose-gc): on SIGURG a process runs a
// full GC and writes its live heap to a file the benchmark waits for, so memory before and after a
// soak is compared on what the process keeps, not on RSS alone (RSS also follows V8's young
// generation, which grows under load and shrinks when idle). SIGURG because its default is to be
// ignored and nothing else here listens to it (close-with-grace closes the services on SIGUSR2).
import { renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getHeapStatistics } from 'node:v8';

export const heapReportFile = (pid: number) => join(tmpdir(), `agentyard-heap-${pid}.json`);

process.on('SIGURG', () => {
  (globalThis as { gc?: () => void }).gc?.();
  const file = heapReportFile(process.pid);
  writeFileSync(`${file}.part`, JSON.stringify({ liveBytes: getHeapStatistics().used_heap_size }));
  renameSync(`${file}.part`, file);
});
