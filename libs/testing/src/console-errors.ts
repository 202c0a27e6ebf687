import type { Test } from 'tap';

/**
 * What the process writes through console.error while the test runs (where libraries print what no
 * listener took, such as ioredis' "Unhandled error event"), put back at its end; `onWrite` hears each.
 */
export function consoleErrors(t: Test, onWrite: () => void = () => {}): unknown[][] {
  const written: unknown[][] = [];
  const original = console.error;
  console.error = (...args: unknown[]) => {
    written.push(args);
    onWrite();
  };
  t.teardown(() => {
    console.error = original;
  });
  return written;
}
