import { createHash } from 'node:crypto';
import type { SQL } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import type postgres from 'postgres';
import { DEFAULT_SCHEMA } from '../src/db/schema-name.js';
import { storeNames } from '../src/db/store-names.js';
import { applyPageSql, matchLockSharedSql } from '../src/sync/apply/page-statement.js';
import { PAGE_FEED } from './page-fixture.js';

const dialect = new PgDialect();
const NAMES = storeNames(DEFAULT_SCHEMA);
const EVENTS = '\u0000events';
const ITERATOR = '\u0000iterator';
const VERSION = 987_654_321_987;

const literal = (value: unknown): string => {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (typeof value === 'string') return `'${value.replaceAll("'", "''")}'`;
  throw new TypeError(`bench:page cannot inline a ${typeof value} parameter`);
};

/**
 * The product's SQL as text for plpgsql's EXECUTE ... USING: the page's events json becomes $1, the
 * expected version $2 and the next iterator $3; every other parameter is inlined as its literal.
 */
function toExecutable(statement: SQL): string {
  const { sql: text, params } = dialect.sqlToQuery(statement);
  return text.replace(/\$(\d+)\b/g, (_, index: string) => {
    const value = params[Number(index) - 1];
    if (value === EVENTS) return '$1';
    if (value === VERSION) return '$2';
    if (value === ITERATOR) return '$3';
    return literal(value);
  });
}

/** The page statement applyPage() sends, and the shared match lock sent before it. */
export function productStatements(): { lock: string; page: string } {
  const page = applyPageSql(NAMES, {
    feed: PAGE_FEED,
    expectedVersion: VERSION,
    nextIterator: ITERATOR,
    receivedAt: '2026-01-02T00:00:00.000Z',
    eventsJson: EVENTS,
    malformedJson: '[]',
    malformedCount: 0,
  });
  return { lock: toExecutable(matchLockSharedSql(NAMES, PAGE_FEED)), page: toExecutable(page) };
}

/**
 * Installs bench_page_run(variant, from, to): pages from..to of bench_pages, each as the product's
 * transaction without a client (the lock statement, the page statement, COMMIT, which runs the deferred
 * commit stamp), with the statements of `variant` read from bench_statements and run by EXECUTE, which
 * plans each page anew: the ledger's "planned per page" row (every other row runs cachedPlanRunner).
 */
export async function installPageRunner(sql: postgres.Sql): Promise<void> {
  await sql`create table if not exists public.bench_statements (variant text primary key, lock text not null, page text not null)`;
  await sql.unsafe(`
    create or replace procedure public.bench_page_run(p_variant text, p_from int, p_to int)
    language plpgsql as $$
    declare
      lock_sql text;
      page_sql text;
      expected bigint;
      moved bigint;
      body json;
    begin
      select s.lock, s.page into lock_sql, page_sql from public.bench_statements s where s.variant = p_variant;
      for i in p_from..p_to loop
        select version into expected from intake_sync.feed_checkpoints where feed = '${PAGE_FEED}';
        select events into body from public.bench_pages where n = i;
        execute lock_sql;
        execute page_sql into moved using body, expected, 'page_' || i;
        if moved is null then raise exception 'bench page %: the checkpoint moved', i; end if;
        commit;
      end loop;
    end $$`);
}

/** The procedure that applies a variant's pages with cached plans (see cachedPlanRunner). */
export const runnerOf = (variant: string): string => `public.bench_run_${createHash('sha256').update(variant).digest('hex').slice(0, 12)}`;

/**
 * A procedure applying pages from..to with the page statement written into it as static SQL, so plpgsql
 * prepares it once and the plan cache chooses custom or generic plans as it does for the daemon, which
 * prepares the page statement once per connection (page-transaction.ts). EXECUTE plans every page: 10% of
 * the product's CPU per page on a quiet machine, which the ceiling read as the page's own cost. The statement's
 * $1 (the events json), $2 (the expected version) and $3 (the next iterator) become variables.
 */
export function cachedPlanRunner(name: string, o: { versionOf: string; lock?: string; page: string }): string {
  const page = o.page.replace(/\$([123])\b/g, (_, n: string) => ['bench_events', 'bench_expected', 'bench_iterator'][Number(n) - 1] ?? '');
  // the lock statement is a SELECT of one row: PERFORM runs it for its effect
  const lock = o.lock ? `${o.lock.replace(/^select /, 'perform ')};` : '';
  return `
    create or replace procedure ${name}(p_from int, p_to int)
    language plpgsql as $bench$
    #variable_conflict use_column
    declare
      bench_expected bigint;
      bench_events json;
      bench_iterator text;
      bench_moved bigint;
      bench_row record;
    begin
      for bench_i in p_from..p_to loop
        bench_expected := (${o.versionOf});
        bench_events := (select events from public.bench_pages where n = bench_i);
        bench_iterator := 'page_' || bench_i;
        ${lock}
        bench_moved := null;
        for bench_row in ${page} loop bench_moved := bench_row.version; end loop;
        if bench_moved is null then raise exception 'bench page %: the checkpoint moved', bench_i; end if;
        commit;
      end loop;
    end $bench$`;
}

/**
 * Stores the statements a variant runs (the product's, or the product's rewritten by `rewrite`) and
 * creates its cached-plan runner (runnerOf).
 */
export async function storeVariantStatements(sql: postgres.Sql, variant: string, rewrite?: (page: string) => string): Promise<void> {
  const { lock, page } = productStatements();
  const text = rewrite ? rewrite(page) : page;
  if (rewrite && text === page) throw new Error(`bench:page variant ${variant}: its rewrite matched nothing in the page statement`);
  await sql`insert into public.bench_statements values (${variant}, ${lock}, ${text})
    on conflict (variant) do update set lock = excluded.lock, page = excluded.page`;
  const versionOf = `select version from intake_sync.feed_checkpoints where feed = '${PAGE_FEED}'`;
  await sql.unsafe(cachedPlanRunner(runnerOf(variant), { versionOf, lock, page: text }));
}
