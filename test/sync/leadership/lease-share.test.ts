import { describe, expect, test } from 'vitest';
import { leaseShare, mayTakeLease, mustYieldLease } from '../../../src/sync/leadership/lease-share.js';

describe('lease share (feeds spread over replicas)', () => {
  test.each<[number, number, number]>([
    // feeds, members, share
    [1, 1, 1],
    [1, 3, 1],
    [20, 1, 20],
    [20, 2, 10],
    [20, 3, 7],
    [3, 2, 2],
    [2, 5, 1],
    [5, 0, 5], // no member counted yet (this replica's own lock not seen): never zero
  ])('%i feeds over %i replicas: at most %i each', (feeds, members, share) => {
    expect(leaseShare(feeds, members)).toBe(share);
  });

  test.each<[number, number, number, boolean, boolean]>([
    // held, feeds, members, may take one more, must give one up
    [0, 20, 2, true, false],
    [9, 20, 2, true, false],
    [10, 20, 2, false, false],
    [20, 20, 2, false, true], // a second replica joined a lone holder of every feed
    [11, 20, 2, false, true],
    [7, 20, 3, false, false],
    [1, 1, 2, false, false], // one feed, two replicas: the holder keeps it
    [0, 1, 2, true, false], // ...and a standby takes it when it is free
  ])('holding %i of %i feeds with %i replicas: take %s, yield %s', (held, feeds, members, take, give) => {
    expect(mayTakeLease(held, feeds, members)).toBe(take);
    expect(mustYieldLease(held, feeds, members)).toBe(give);
  });
});
