import { Transform, type TransformCallback } from 'node:stream';

/** Secrets shorter than this are not looked for (they would match ordinary text). */
const SHORTEST_SECRET = 12;

/**
 * Secrets of a known shape whose values the platform does not keep: the agent's AI key (`ag_` and
 * 32 random bytes, base64url), new for each container and stored only as its hash.
 */
const SECRET_SHAPES = [{ prefix: 'ag_', pattern: /ag_[A-Za-z0-9_-]{43}/g, length: 46 }];

/** The scrubbing itself: `next` takes a chunk and gives what is safe to emit so far; `end` gives the rest. */
export function scrubbing(secrets: string[]) {
  const needles = [...new Set(secrets.filter((s) => s.length >= SHORTEST_SECRET))].map((s) => Buffer.from(s));
  const keep = Math.max(0, ...needles.map((n) => n.length - 1), ...SECRET_SHAPES.map((s) => s.length - 1));
  let held = Buffer.alloc(0);
  const scrub = (buffer: Buffer) => {
    for (const needle of needles) {
      for (let at = buffer.indexOf(needle); at !== -1; at = buffer.indexOf(needle, at + needle.length))
        buffer.fill(0x2a, at, at + needle.length);
    }
    for (const { prefix, pattern } of SECRET_SHAPES) {
      // Most chunks hold no prefix at all: only those are read as text (latin1: one character per byte, so indexes are offsets).
      if (buffer.indexOf(prefix) === -1) continue;
      for (const match of buffer.toString('latin1').matchAll(pattern))
        buffer.fill(0x2a, match.index, match.index + match[0].length);
    }
  };
  return {
    next(chunk: Buffer): Buffer {
      const buffer = Buffer.concat([held, chunk]);
      scrub(buffer);
      const cut = Math.max(0, buffer.length - keep);
      held = Buffer.from(buffer.subarray(cut));
      return buffer.subarray(0, cut);
    },
    end(): Buffer {
      scrub(held);
      return held;
    },
  };
}

/**
 * Replaces every occurrence of the given secrets with as many `*`, keeping the length (a SQLite page
 * stays a page), across chunk boundaries: the last bytes that could start a match wait for the next chunk.
 */
export function secretScrubber(secrets: string[]): Transform {
  const scrub = scrubbing(secrets);
  return new Transform({
    transform(chunk: Buffer, _encoding, callback: TransformCallback) {
      callback(null, scrub.next(chunk));
    },
    flush(callback: TransformCallback) {
      callback(null, scrub.end());
    },
  });
}
