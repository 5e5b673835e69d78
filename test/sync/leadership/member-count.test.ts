import { describe, expect, it } from 'vitest';
import { MemberCount } from '../../../src/sync/leadership/member-count.js';

describe('MemberCount: whether a replica holds its share, without a statement', () => {
  it('at or above ceil(feeds / members) by a fresh count: at its share; below it: not', () => {
    const count = new MemberCount(1_000, () => 0);
    count.record(4);
    expect(count.atShare(125, 500)).toBe(true);
    expect(count.atShare(126, 500)).toBe(true);
    expect(count.atShare(124, 500)).toBe(false);
    // a member left: the share grows at once
    count.record(3);
    expect(count.atShare(125, 500)).toBe(false);
  });

  it('no count, a count older than its age limit, or a forgotten one: never at its share (the take is sent)', () => {
    let now = 0;
    const count = new MemberCount(1_000, () => now);
    expect(count.atShare(500, 500)).toBe(false);
    count.record(1);
    expect(count.atShare(500, 500)).toBe(true);
    now = 1_000;
    expect(count.atShare(500, 500)).toBe(true);
    now = 1_001;
    expect(count.atShare(500, 500)).toBe(false);
    count.record(1);
    count.forget();
    expect(count.atShare(500, 500)).toBe(false);
  });

  it('ignores a count that is not a whole number of at least one', () => {
    const count = new MemberCount(1_000, () => 0);
    for (const bad of [0, -1, 1.5, Number.NaN]) count.record(bad);
    expect(count.atShare(500, 500)).toBe(false);
    count.record(2);
    count.record(Number.NaN);
    expect(count.atShare(250, 500)).toBe(true);
  });
});
