import { describe, expect, test } from 'vitest';
import { shouldAdvance, statusRank } from '../../../src/sync/matching/status-rank.js';

describe('statusRank', () => {
  test.each([
    ['accepted', 1],
    ['ordered', 2],
    ['dispensed', 3],
    ['delivered', 4],
    ['rejected', 5],
    ['cancelled', null],
    ['Delivered', null],
    ['', null],
    ['toString', null],
    ['__proto__', null],
  ])('%j -> %j', (name, rank) => {
    expect(statusRank(name)).toBe(rank);
  });
});

describe('shouldAdvance', () => {
  const r = (name: string) => statusRank(name);
  test.each([
    ['nothing yet, accepted', 0, r('accepted'), true],
    ['accepted, ordered', r('accepted'), r('ordered'), true],
    ['accepted, delivered (skipping steps)', r('accepted'), r('delivered'), true],
    ['ordered, accepted arriving late', r('ordered'), r('accepted'), false],
    ['delivered, dispensed replayed', r('delivered'), r('dispensed'), false],
    ['dispensed, dispensed duplicate', r('dispensed'), r('dispensed'), false],
    ['delivered, rejected', r('delivered'), r('rejected'), true],
    ['rejected, delivered (rejected is terminal)', r('rejected'), r('delivered'), false],
    ['rejected, rejected', r('rejected'), r('rejected'), false],
    ['nothing yet, unknown name', 0, r('cancelled'), false],
    ['ordered, unknown name', r('ordered'), r('cancelled'), false],
  ])('%s -> %s', (_label, current, event, expected) => {
    expect(shouldAdvance(current as number, event)).toBe(expected);
  });
});
