// `npm run test:watch`: the unit tier, run again whenever a source or test file changes (Ctrl-C ends it).
// Not node's --watch: its module tracking reaches into tap's own children and floods the output.
import { type ChildProcess, spawn } from 'node:child_process';
import { watch } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '@agentyard/config';

const WATCHED = ['libs', 'services', 'proto-schemas', 'scripts', 'test'];
const QUIET_MS = 200; // an editor's save is several events: run once they settle

let run: ChildProcess | undefined;
let timer: NodeJS.Timeout | undefined;

/** Ends the run under way with its tap processes (a group of their own). */
function stop(): void {
  if (run?.pid && run.exitCode === null) process.kill(-run.pid, 'SIGTERM');
}

function start(): void {
  stop();
  console.clear();
  run = spawn(process.execPath, [join(repoRoot, 'scripts/test.ts'), '--tier=unit'], {
    stdio: 'inherit',
    cwd: repoRoot,
    detached: true,
  });
}

for (const dir of WATCHED) {
  watch(join(repoRoot, dir), { recursive: true }, (_event, file) => {
    if (!file || !/\.(ts|tsx|json)$/.test(file) || /(^|\/)(node_modules|dist)\//.test(file)) return;
    clearTimeout(timer);
    timer = setTimeout(start, QUIET_MS);
  });
}
process.once('SIGINT', () => {
  stop();
  process.exit(130);
});
start();
