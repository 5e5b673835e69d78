import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { Db } from '../../../src/db/connection.js';
import { attachStoreNames, storeNames } from '../../../src/db/store-names.js';
import { SharedStatisticsPasses } from '../../../src/sync/statistics/shared-passes.js';
import { StatisticsKeeper } from '../../../src/sync/statistics/statistics-keeper.js';

function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<T>((ok, fail) => {
    resolve = ok;
    reject = fail;
  });
  return { promise, resolve, reject };
}

describe('SharedStatisticsPasses', () => {
  it('runs one pass at a time: a leader asking while another runs is skipped', async () => {
    const passes = new SharedStatisticsPasses(60_000, { now: () => 0 });
    const first = deferred<string>();
    const running = passes.run(() => first.promise);
    let secondRan = false;
    expect(
      await passes.run(async () => {
        secondRan = true;
        return 'second';
      }),
    ).toBeUndefined();
    expect(secondRan).toBe(false);
    first.resolve('first');
    expect(await running).toBe('first');
  });

  it('after a pass, the next runs only once the interval has passed since it ended', async () => {
    let now = 1_000;
    const passes = new SharedStatisticsPasses(60_000, { now: () => now });
    expect(await passes.run(async () => 'a')).toBe('a');
    now = 60_999;
    expect(await passes.run(async () => 'b')).toBeUndefined();
    now = 61_000;
    expect(await passes.run(async () => 'c')).toBe('c');
  });

  it('a failed pass leaves the next leader free to try at once', async () => {
    const passes = new SharedStatisticsPasses(60_000, { now: () => 0 });
    await expect(passes.run(() => Promise.reject(new Error('lock timeout')))).rejects.toThrow('lock timeout');
    expect(await passes.run(async () => 'retried')).toBe('retried');
  });
});

describe('StatisticsKeeper with shared passes', () => {
  /** A store whose table read the test answers by hand, counting the reads. */
  function fakeDb() {
    const reads: Array<ReturnType<typeof deferred<unknown>>> = [];
    const db = {
      execute: () => {
        const read = deferred<unknown>();
        reads.push(read);
        return read.promise;
      },
    };
    attachStoreNames(db, storeNames('intake_sync'));
    return { db: db as unknown as Db, reads };
  }

  it("500 feeds' keepers due together send one pass: the others are skipped, analyzing nothing", async () => {
    const { db, reads } = fakeDb();
    const shared = new SharedStatisticsPasses(60_000, { now: () => 0 });
    const keepers = Array.from(
      { length: 500 },
      () =>
        new StatisticsKeeper({
          db,
          settings: { intervalMs: 60_000, startDelayMs: 10_000 },
          clock: { now: () => 0 },
          sleep: async () => {},
          log: pino({ level: 'silent' }),
          shared,
        }),
    );
    const passes = keepers.map((keeper) => keeper.passOnce());
    // the skipped ones end without a statement
    const results = await Promise.all(passes.slice(1));
    expect(results.every((analyzed) => analyzed.length === 0)).toBe(true);
    expect(reads).toHaveLength(1);
    // the one pass reads the tables: none due
    reads[0]?.resolve([]);
    expect(await passes[0]).toEqual([]);
  });
});
