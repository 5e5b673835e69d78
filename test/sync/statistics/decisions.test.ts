import { describe, expect, test } from 'vitest';
import { analyzeLimit, nextStatisticsDelay, tablesDue } from '../../../src/sync/statistics/decisions.js';

const DEFAULT = { base: 50, scaleFactor: 0.1 };

describe('analyzeLimit: autovacuum_analyze_threshold + autovacuum_analyze_scale_factor * reltuples', () => {
  test.each([
    [DEFAULT, -1, 50],
    [DEFAULT, 0, 50],
    [DEFAULT, 100_000, 10_050],
    [{ base: 0, scaleFactor: 0.02 }, 1_000_000, 20_000],
  ])('%o with reltuples %i: %i', (threshold, reltuples, limit) => {
    expect(analyzeLimit(threshold, reltuples)).toBe(limit);
  });
});

describe('tablesDue', () => {
  test('the tables past their limit, most changed first; a never-analyzed table counts as empty', () => {
    const due = tablesDue(
      [
        { table: 'events', rowsChanged: 100_000, reltuples: -1 },
        { table: 'quarantine', rowsChanged: 100_000, reltuples: -1 },
        { table: 'prescriptions', rowsChanged: 20_000, reltuples: 500_000 },
        { table: 'status_changes', rowsChanged: 60_051, reltuples: 600_000 },
        { table: 'outbox', rowsChanged: 60_050, reltuples: 600_000 },
        { table: 'feed_checkpoints', rowsChanged: 50, reltuples: -1 },
        { table: 'audit_entries', rowsChanged: 51, reltuples: -1 },
      ],
      DEFAULT,
    );
    expect(due.map((t) => t.table)).toEqual(['events', 'quarantine', 'status_changes', 'audit_entries']);
  });

  test('nothing changed: nothing due', () => {
    expect(tablesDue([{ table: 'events', rowsChanged: 0, reltuples: 10 }], DEFAULT)).toEqual([]);
  });
});

describe('nextStatisticsDelay', () => {
  test.each([
    [{ passes: 0, failures: 0 }, 10_000],
    [{ passes: 3, failures: 0 }, 60_000],
    [{ passes: 3, failures: 1 }, 5_000],
    [{ passes: 3, failures: 2 }, 10_000],
    [{ passes: 3, failures: 9 }, 60_000],
  ])('%o: %i ms', (run, delay) => {
    expect(nextStatisticsDelay(run, 60_000, 10_000, 5_000)).toBe(delay);
  });

  test('a start delay longer than the interval waits the interval', () => {
    expect(nextStatisticsDelay({ passes: 0, failures: 0 }, 1_000, 10_000, 5_000)).toBe(1_000);
  });
});
