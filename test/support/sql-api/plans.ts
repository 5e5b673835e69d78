import { afterAll, beforeAll, expect } from 'vitest';
import postgres from 'postgres';
import { createTestDatabase, type TestDatabase } from '../db.js';

/** The database of a plan test, once its beforeAll has run. */
export interface PlanDatabase {
  /** superuser connection (clearStatistics and auto_explain need one) */
  readonly admin: postgres.Sql;
  readonly url: string;
  readonly database: TestDatabase['database'];
}

/**
 * The setup every plan test shares: a fresh migrated database named `name`, filled by `seed` through a
 * superuser connection, then stripped of its planner statistics so the plans are the ones a never
 * analyzed server picks; dropped after the file. Does nothing when `real` is false (no PostgreSQL).
 */
export function usePlanDatabase(real: boolean, name: string, seed: (admin: postgres.Sql) => Promise<void>): PlanDatabase {
  let tdb: TestDatabase | undefined;
  let admin: postgres.Sql | undefined;
  beforeAll(async () => {
    if (!real) return;
    tdb = await createTestDatabase(name);
    admin = postgres(tdb.url as string, { max: 1, onnotice: () => {} });
    await seed(admin);
    // no statistics whatever happened before (CREATE INDEX, a stray ANALYZE)
    await clearStatistics(admin);
  }, 180_000);
  afterAll(async () => {
    if (!real) return;
    await admin?.end({ timeout: 5 });
    await tdb?.drop();
  });
  const ready = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error(`the plan database ${name} is not set up (no PostgreSQL, or its beforeAll failed)`);
    return value;
  };
  return {
    get admin() {
      return ready(admin);
    },
    get url() {
      return ready(tdb?.url as string | undefined);
    },
    get database() {
      return ready(tdb).database;
    },
  };
}

/**
 * Forgets every planner statistic of the schema's tables, as on a server with autovacuum off that
 * never analyzed them (or the first minute after a burst): whatever CREATE INDEX or a stray ANALYZE
 * left, the planner falls back to its defaults. Superuser only.
 */
export async function clearStatistics(admin: postgres.Sql, schema = 'intake_sync'): Promise<void> {
  await admin.unsafe(`delete from pg_statistic where starelid in (select oid from pg_class where relnamespace = $1::regnamespace)`, [
    schema,
  ]);
  await admin.unsafe(`update pg_class set reltuples = -1, relpages = 0 where relnamespace = $1::regnamespace and relkind = 'r'`, [schema]);
}

/** How many pg_stats rows the schema's `tables` have (0: the planner has nothing but its defaults). */
export async function statisticsRows(admin: postgres.Sql, tables: readonly string[], schema = 'intake_sync'): Promise<number> {
  const [row] = await admin.unsafe<{ n: number }[]>(
    `select count(*)::int as n from pg_stats where schemaname = $1 and tablename = any ($2::text[])`,
    [schema, tables as string[]],
  );
  return row?.n ?? -1;
}

/**
 * The plans auto_explain reports for everything `statement` runs, the statements inside SQL functions
 * included: the plans actually used (superuser: LOAD). Nothing the statement writes stays.
 */
export async function nestedPlans(url: string, statement: string, params: unknown[] = []): Promise<string[]> {
  const plans: string[] = [];
  const session = postgres(url, { max: 1, onnotice: (n) => plans.push(String(n.message)) });
  try {
    await session.begin(async (tx) => {
      await tx.unsafe(`load 'auto_explain'`);
      await tx.unsafe(`set local auto_explain.log_min_duration = 0`);
      await tx.unsafe(`set local auto_explain.log_nested_statements = on`);
      await tx.unsafe(`set local auto_explain.log_level = notice`);
      // a plan that flipped fails here at once, not after the minutes it would take
      await tx.unsafe(`set local statement_timeout = '30s'`);
      await tx.unsafe(statement, params as never[]);
      // nothing it wrote stays: every test sees the same tables
      await tx.unsafe('rollback and chain');
    });
  } finally {
    await session.end({ timeout: 5 });
  }
  return plans;
}

/** The one plan among `plans` whose query text contains `marker` (a CTE's name, a table's). */
export function planOf(plans: readonly string[], marker: string): string {
  const found = plans.filter((p) => p.includes(marker));
  expect(found, `one plan with ${marker}`).toHaveLength(1);
  return found[0] as string;
}

/**
 * What a plan that holds looks like: the `indexes` named, and on the big tables neither a full scan
 * nor a bitmap walking a whole index.
 */
export function expectIndexDriven(plan: string, indexes: readonly string[]): void {
  for (const index of indexes) expect(plan).toContain(`using ${index} on`);
  expect(plan).not.toMatch(/Bitmap/);
  expect(plan).not.toMatch(/Seq Scan on (events|quarantine|prescriptions)\b/);
  // the index of held events by subscription, walked for the feed alone, was the first flip seen
  expect(plan).not.toMatch(/events_held_subscription_idx/);
}

/**
 * Runs batches of `call` (a purge function's call, 500 rows a batch) until one comes back short, each
 * batch its own statement under a 2 s budget: a plan that flipped fails here instead of taking minutes.
 */
export async function purgeAll(url: string, call: string): Promise<{ purged: number; batches: number }> {
  const session = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await session.unsafe(`set statement_timeout = '2s'`);
    let purged = 0;
    let batches = 0;
    for (;;) {
      const [row] = await session.unsafe<{ n: string }[]>(`select ${call} as n`);
      const n = Number(row?.n ?? 0);
      purged += n;
      batches += 1;
      if (n < 500) return { purged, batches };
    }
  } finally {
    await session.end({ timeout: 5 });
  }
}
