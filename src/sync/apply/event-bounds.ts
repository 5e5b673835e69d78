import { createHash } from 'node:crypto';
import { MAX_EVENT_BYTES, MAX_JSON_DEPTH } from '../../intake/limits.js';

// The size and shape bounds preparePage() checks before anything recursive (JSON.stringify, Postgres'
// jsonb parser) or large reaches an event. All iterative: a hostile event cannot exhaust the stack here.

/** Whether `value` nests objects and arrays deeper than `maxDepth` (the value itself is level 1). */
export function nestsDeeperThan(value: unknown, maxDepth = MAX_JSON_DEPTH): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const nodes: object[] = [value];
  const depths: number[] = [1];
  while (nodes.length > 0) {
    const node = nodes.pop() as object;
    const depth = depths.pop() as number;
    if (depth > maxDepth) return true;
    const children: unknown[] = Array.isArray(node) ? node : Object.values(node);
    for (let i = 0; i < children.length; i++) {
      const child = children[i];
      if (typeof child === 'object' && child !== null) {
        nodes.push(child);
        depths.push(depth + 1);
      }
    }
  }
  return false;
}

/** What stands in for a value cut at the depth bound, in a pruned copy. */
export const CUT_MARK = `(nested deeper than ${MAX_JSON_DEPTH} levels: not kept)`;

/**
 * A copy of `value` in which everything below `maxDepth` levels is replaced by CUT_MARK: the part of a
 * too-deep event that can be serialised and stored (its id, name and identity stay readable).
 */
export function prunedCopy(value: unknown, maxDepth = MAX_JSON_DEPTH): unknown {
  if (typeof value !== 'object' || value === null) return value;
  const root: Record<string, unknown> | unknown[] = Array.isArray(value) ? [] : {};
  const work: Array<{ from: object; to: Record<string, unknown> | unknown[]; depth: number }> = [{ from: value, to: root, depth: 1 }];
  while (work.length > 0) {
    const { from, to, depth } = work.pop() as (typeof work)[number];
    for (const [key, child] of Object.entries(from)) {
      let copy: unknown = child;
      if (typeof child === 'object' && child !== null) {
        if (depth >= maxDepth) copy = CUT_MARK;
        else {
          copy = Array.isArray(child) ? [] : {};
          work.push({ from: child, to: copy as Record<string, unknown>, depth: depth + 1 });
        }
      }
      // defineProperty: a key named __proto__ stays a plain key of the copy, as JSON.parse made it
      Object.defineProperty(to, key, { value: copy, enumerable: true, writable: true, configurable: true });
    }
  }
  return root;
}

/** The UTF-8 size of `json` when it exceeds `maxBytes`, else undefined (cheap for the common small event). */
export function oversizedBytes(json: string, maxBytes = MAX_EVENT_BYTES): number | undefined {
  // a UTF-16 unit is at most 3 UTF-8 bytes: most events are decided without measuring
  if (json.length * 3 <= maxBytes) return undefined;
  const bytes = Buffer.byteLength(json, 'utf8');
  return bytes > maxBytes ? bytes : undefined;
}

/** sha256 of `text` in hex: the key and the fingerprint of a body not kept. */
export function sha256Hex(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** The stored stand-in of a body too large (or unsafe) to keep: its fingerprint and size, no content. */
export function digestOnlyJson(json: string, why: string): string {
  return JSON.stringify({ omitted: why, sha256: sha256Hex(json), bytes: Buffer.byteLength(json, 'utf8') });
}
