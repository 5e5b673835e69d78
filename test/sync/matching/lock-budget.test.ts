import { describe, expect, test } from 'vitest';
import { afterBudgetExceeded, nextBatchSize, runWithinBudget } from '../../../src/sync/matching/lock-budget.js';
import { MatchLockBudgetError } from '../../../src/sync/matching/errors/match-lock-budget-error.js';

const timeout = () => Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' });

describe('afterBudgetExceeded', () => {
  test.each([
    [500, { kind: 'halve', first: 250, second: 250 }],
    [7, { kind: 'halve', first: 4, second: 3 }],
    [2, { kind: 'halve', first: 1, second: 1 }],
    [1, { kind: 'give-up' }],
  ])('a batch of %i', (size, step) => {
    expect(afterBudgetExceeded(size)).toEqual(step);
  });

  test.each([0, -1, 1.5, Number.NaN])('refuses a size of %s', (size) => {
    expect(() => afterBudgetExceeded(size)).toThrow(RangeError);
  });
});

describe('nextBatchSize', () => {
  test.each([
    // max, last, smallest committed, next
    [500, 500, 500, 500],
    [500, 500, undefined, 500],
    [500, 500, 125, 125],
    [500, 125, 125, 250],
    [500, 250, 250, 500],
    [500, 400, 400, 500],
    [500, 250, 1, 1],
    [500, 1, 1, 2],
  ])('max %i, last %i, smallest committed %s: %i', (max, last, smallest, next) => {
    expect(nextBatchSize(max, last, smallest)).toBe(next);
  });
});

describe('runWithinBudget', () => {
  test('halves a batch that exceeds its budget until the parts commit, in order', async () => {
    const committed: number[][] = [];
    const halved: number[] = [];
    const smallest = await runWithinBudget(
      [1, 2, 3, 4, 5, 6, 7, 8],
      async (batch) => {
        if (batch.length > 2) throw timeout();
        committed.push([...batch]);
      },
      { budgetMs: 2000, onHalve: (n) => halved.push(n), describe: String },
    );
    expect(committed).toEqual([
      [1, 2],
      [3, 4],
      [5, 6],
      [7, 8],
    ]);
    expect(halved).toEqual([8, 4, 4]);
    expect(smallest).toBe(2);
  });

  test('one item that still exceeds the budget fails naming it, after what came before it committed', async () => {
    const committed: string[] = [];
    const failure = await runWithinBudget(
      ['rx-1', 'rx-2', 'rx-slow', 'rx-4'],
      async (batch) => {
        if (batch.includes('rx-slow')) throw timeout();
        committed.push(...batch);
      },
      { budgetMs: 2000, describe: (id) => `external_id ${id}` },
    ).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(MatchLockBudgetError);
    expect((failure as MatchLockBudgetError).message).toMatch(/^external_id rx-slow alone exceeded the 2000 ms statement budget/);
    expect((failure as MatchLockBudgetError).cause).toMatchObject({ code: '57014' });
    expect(committed).toEqual(['rx-1', 'rx-2']);
  });

  test('any other error is not retried', async () => {
    let calls = 0;
    const failure = await runWithinBudget(
      [1, 2, 3, 4],
      async () => {
        calls++;
        throw Object.assign(new Error('duplicate'), { code: '23505' });
      },
      { budgetMs: 2000, describe: String },
    ).catch((error: unknown) => error);
    expect(failure).toMatchObject({ code: '23505' });
    expect(calls).toBe(1);
  });

  test('nothing to run: nothing runs', async () => {
    expect(
      await runWithinBudget(
        [],
        async () => {
          throw new Error('never');
        },
        { budgetMs: 1, describe: String },
      ),
    ).toBe(0);
  });
});
