/**
 * Lookups answered from memory only while every change to their rows is known: the owner feeds it
 * invalidations (database notices) and says when that feed is live. While it is not (before the
 * first connection, after one is lost), nothing is served from memory or stored, so a change made
 * meanwhile takes effect on the next lookup. A lookup that raced an invalidation is not stored.
 * Misses (undefined) are never stored; the oldest entries go first beyond `maxEntries`.
 */
export class FreshCache<V> {
  private readonly entries = new Map<string, V>();
  private readonly maxEntries: number;
  private live = false;
  /** Bumped by every invalidation: a load that started before one may hold stale data. */
  private generation = 0;

  constructor(maxEntries: number) {
    this.maxEntries = maxEntries;
  }

  get size(): number {
    return this.entries.size;
  }

  async get(key: string, load: () => Promise<V | undefined>): Promise<V | undefined> {
    if (this.live) {
      const cached = this.entries.get(key);
      if (cached !== undefined) return cached;
    }
    const generation = this.generation;
    const value = await load();
    if (value !== undefined && this.live && generation === this.generation) {
      if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
      this.entries.set(key, value);
    }
    return value;
  }

  delete(key: string): void {
    this.generation++;
    this.entries.delete(key);
  }

  /** Drops every entry the predicate matches. */
  deleteWhere(matches: (value: V) => boolean): void {
    this.generation++;
    for (const [key, value] of this.entries) if (matches(value)) this.entries.delete(key);
  }

  clear(): void {
    this.generation++;
    this.entries.clear();
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
