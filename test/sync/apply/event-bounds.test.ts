import { describe, expect, test } from 'vitest';
import { MAX_EVENT_BYTES, MAX_JSON_DEPTH } from '../../../src/intake/limits.js';
import { CUT_MARK, digestOnlyJson, nestsDeeperThan, oversizedBytes, prunedCopy } from '../../../src/sync/apply/event-bounds.js';

/** `{a:{a:...}}` nested `levels` deep (the outer object is level 1). */
function nested(levels: number): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  let node = root;
  for (let level = 1; level < levels; level++) {
    const child: Record<string, unknown> = {};
    node.a = child;
    node = child;
  }
  return root;
}

describe('nestsDeeperThan', () => {
  test.each([
    [null, false],
    ['text', false],
    [{}, false],
    [[[]], false],
  ])('%j at bound 2 -> %s', (value, expected) => {
    expect(nestsDeeperThan(value, 2)).toBe(expected);
  });

  test('counts arrays and objects alike, exactly at the bound', () => {
    expect(nestsDeeperThan([{ a: [] }], 3)).toBe(false);
    expect(nestsDeeperThan([{ a: [{}] }], 3)).toBe(true);
  });

  test('a 100,000-level value is found without recursion (JSON.stringify would throw)', () => {
    const deep = JSON.parse(`${'['.repeat(100_000)}${']'.repeat(100_000)}`);
    expect(() => JSON.stringify(deep)).toThrow(RangeError);
    expect(nestsDeeperThan(deep)).toBe(true);
    expect(nestsDeeperThan(nested(MAX_JSON_DEPTH))).toBe(false);
    expect(nestsDeeperThan(nested(MAX_JSON_DEPTH + 1))).toBe(true);
  });
});

describe('prunedCopy', () => {
  test('keeps the shallow part, key order and a __proto__ key, and cuts below the bound', () => {
    const value = JSON.parse('{"id":"e1","__proto__":{"x":1},"deep":{"a":{"b":{"c":1}}},"list":[1,[2,[3]]]}');
    const copy = prunedCopy(value, 3);
    expect(JSON.stringify(copy)).toBe(
      JSON.stringify({ id: 'e1', ['__proto__']: { x: 1 }, deep: { a: { b: CUT_MARK } }, list: [1, [2, CUT_MARK]] }),
    );
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
  });

  test('a 100,000-level value becomes serialisable', () => {
    const deep = JSON.parse(`{"id":"e1","payload":${'['.repeat(100_000)}${']'.repeat(100_000)}}`);
    const json = JSON.stringify(prunedCopy(deep));
    expect(json.startsWith('{"id":"e1","payload":[[')).toBe(true);
    expect(nestsDeeperThan(JSON.parse(json))).toBe(false);
  });
});

describe('oversizedBytes and digestOnlyJson', () => {
  test('measures UTF-8 bytes, not characters', () => {
    expect(oversizedBytes('x'.repeat(10), 10)).toBeUndefined();
    expect(oversizedBytes('é'.repeat(6), 10)).toBe(12);
    expect(oversizedBytes('x'.repeat(MAX_EVENT_BYTES))).toBeUndefined();
    expect(oversizedBytes('x'.repeat(MAX_EVENT_BYTES + 1))).toBe(MAX_EVENT_BYTES + 1);
  });

  test('a digest names the size and fingerprint, never the content', () => {
    const digest = JSON.parse(digestOnlyJson('{"patient":"Ada"}', 'too large'));
    expect(digest).toEqual({ omitted: 'too large', sha256: expect.stringMatching(/^[0-9a-f]{64}$/), bytes: 17 });
    expect(JSON.stringify(digest)).not.toContain('Ada');
  });
});
