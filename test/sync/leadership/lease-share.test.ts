import { describe, expect, test } from 'vitest';
import { leaseShare, mayTakeLease, leasesToYield } from '../../../src/sync/leadership/lease-share.js';

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

  test.each<[number, number, number, boolean, number]>([
    // held, feeds, members, may take one more, leases to give up
    [0, 20, 2, true, 0],
    [9, 20, 2, true, 0],
    [10, 20, 2, false, 0],
    [20, 20, 2, false, 10], // a second replica joined a lone holder of every feed: all the excess at once
    [11, 20, 2, false, 1],
    [7, 20, 3, false, 0],
    [500, 500, 4, false, 375], // three replicas joined a lone holder of 500
    [1, 1, 2, false, 0], // one feed, two replicas: the holder keeps it
    [0, 1, 2, true, 0], // ...and a standby takes it when it is free
  ])('holding %i of %i feeds with %i replicas: take %s, give up %i', (held, feeds, members, take, give) => {
    expect(mayTakeLease(held, feeds, members)).toBe(take);
    expect(leasesToYield(held, feeds, members)).toBe(give);
  });
});
