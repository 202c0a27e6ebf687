/**
 * Lookups answered from memory only while every change to their rows is known: the owner feeds it
 * invalidations (database notices) and says when that feed is live. While it is not (before the
 * first connection, after one is lost), nothing is served from memory or stored, so a change made
 * meanwhile takes effect on the next lookup. A lookup that raced an invalidation is not stored.
 * Misses (undefined) are kept only with `missTtlMs`, for that long (any invalidation but of another
 * single key forgets them all: a changed row may give any key a value); the oldest entries (and
 * misses) go first beyond `maxEntries`.
 */
export class FreshCache<V> {
  private readonly entries = new Map<string, V>();
  /** Keys that loaded nothing, and until when that answer stands. */
  private readonly misses = new Map<string, number>();
  private readonly maxEntries: number;
  private readonly missTtlMs: number;
  private readonly now: () => number;
  private live = false;
  /** Bumped by every invalidation: a load that started before one may hold stale data. */
  private generation = 0;

  constructor(maxEntries: number, options: { missTtlMs?: number; now?: () => number } = {}) {
    this.maxEntries = maxEntries;
    this.missTtlMs = options.missTtlMs ?? 0;
    this.now = options.now ?? Date.now;
  }

  get size(): number {
    return this.entries.size;
  }

  async get(key: string, load: () => Promise<V | undefined>): Promise<V | undefined> {
    if (this.live) {
      const cached = this.entries.get(key);
      if (cached !== undefined) return cached;
      const missUntil = this.misses.get(key);
      if (missUntil !== undefined && missUntil > this.now()) return undefined;
      this.misses.delete(key);
    }
    const generation = this.generation;
    const value = await load();
    if (!this.live || generation !== this.generation) return value;
    if (value !== undefined) {
      if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
      this.entries.set(key, value);
    } else if (this.missTtlMs > 0) {
      if (this.misses.size >= this.maxEntries) this.misses.delete(this.misses.keys().next().value!);
      this.misses.set(key, this.now() + this.missTtlMs);
    }
    return value;
  }

  delete(key: string): void {
    this.generation++;
    this.entries.delete(key);
    this.misses.delete(key);
  }

  /** Drops every entry the predicate matches. */
  deleteWhere(matches: (value: V) => boolean): void {
    this.generation++;
    for (const [key, value] of this.entries) if (matches(value)) this.entries.delete(key);
    this.misses.clear();
  }

  clear(): void {
    this.generation++;
    this.entries.clear();
    this.misses.clear();
  }

  /** The invalidation feed is live (again): start from empty, since changes may have been missed. */
  resume(): void {
    this.clear();
    this.live = true;
  }

  /** The invalidation feed is down: answer from the database only. */
  suspend(): void {
    this.live = false;
    this.clear();
  }
}
