/**
 * Writes items as a group commit: an item is written at once when no write is under way, and the
 * items that come while one is gather into the next write. Each caller's promise settles with the
 * write that holds its item, so a caller never goes on before its item is written; under load one
 * write carries many items instead of one each.
 */
export function groupCommit<T>(write: (items: T[]) => Promise<void>): (item: T) => Promise<void> {
  let gathering: { item: T; done: () => void; failed: (error: unknown) => void }[] = [];
  let writing = false;
  const drain = async () => {
    writing = true;
    while (gathering.length) {
      const group = gathering;
      gathering = [];
      try {
        await write(group.map(({ item }) => item));
        for (const waiting of group) waiting.done();
      } catch (error) {
        for (const waiting of group) waiting.failed(error);
      }
    }
    writing = false;
  };
  return (item) =>
    new Promise((done, failed) => {
      gathering.push({ item, done, failed });
      if (!writing) void drain();
    });
}
