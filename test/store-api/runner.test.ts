import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, openDatabase } from '../../src/db/connection.js';
import { qualified, rowLimit, runnerOfDb } from '../../src/store-api/runner.js';

// The drizzle runner turns $n placeholders into bound parameters: on embedded PGlite here, the same
// path the CLI and the daemon take on Postgres (the console's runner is postgres.js' own unsafe()).
let database: Database;
beforeAll(async () => {
  database = await openDatabase({});
});
afterAll(async () => {
  await database.close();
});

describe('the SQL API runner', () => {
  it('binds $n placeholders in order, a placeholder used twice included, and values never become SQL', async () => {
    const runner = runnerOfDb(database.db);
    const [row] = await runner.query<{ a: number; b: string; same: boolean }>(
      'select $2::int + 1 as a, $1::text as b, $2::int = $2::int as same',
      ["x'); drop table y; --", 41],
    );
    expect(row).toEqual({ a: 42, b: "x'); drop table y; --", same: true });
  });

  it('refuses a placeholder it has no parameter for, naming it', async () => {
    await expect(runnerOfDb(database.db).query('select $2::int', [1])).rejects.toThrow('statement names $2 but has 1 parameters');
  });

  it('runs a transaction on one handle and rolls it back on a throw', async () => {
    const runner = runnerOfDb(database.db);
    await runner.query('create temporary table t (n int)');
    await expect(
      runner.transaction(async (tx) => {
        await tx.query('insert into t values ($1)', [1]);
        throw new Error('stop');
      }),
    ).rejects.toThrow('stop');
    expect(await runner.query('select n from t')).toEqual([]);
  });

  it('qualifies names with its schema and checks row limits', () => {
    expect(qualified(runnerOfDb(database.db), 'quarantine_page')).toBe('"intake_sync"."quarantine_page"');
    expect(rowLimit(50)).toBe(50);
    expect(() => rowLimit(0)).toThrow('row limit: a positive integer (got 0)');
    expect(() => rowLimit(1.5)).toThrow(RangeError);
  });
});
