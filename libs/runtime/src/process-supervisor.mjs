// Supervises one agent gateway for the process driver: runs it, restarts it with backoff when it
// exits on its own (at most 5 times in a row; a run of a minute resets the count), and stops it
// with the group on SIGTERM/SIGINT. Usage: node process-supervisor.mjs <gateway entry> [args...]
import { spawn } from 'node:child_process';

const [entry, ...args] = process.argv.slice(2);
let child;
let stopping = false;
let failures = 0;

function start() {
  const startedAt = Date.now();
  child = spawn(process.execPath, [entry, ...args], { stdio: 'inherit' });
  child.on('exit', () => {
    if (stopping) return process.exit(0);
    failures = Date.now() - startedAt > 60_000 ? 1 : failures + 1;
    if (failures > 5) return process.exit(1);
    setTimeout(start, 500 * 2 ** (failures - 1));
  });
}

for (const signal of ['SIGTERM', 'SIGINT']) {
  process.on(signal, () => {
    stopping = true;
    if (!child || child.exitCode !== null || child.signalCode !== null) process.exit(0);
    child.kill('SIGTERM');
  });
}
start();
