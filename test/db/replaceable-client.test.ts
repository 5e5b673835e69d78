import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { replaceableClient } from '../../src/db/replaceable-client.js';
import { ADMIN_URL, NEEDS_POSTGRES, postgresReachable } from '../support/db.js';
import { waitFor } from '../support/wait-for.js';

const onPostgres = await postgresReachable();

describe.skipIf(!onPostgres)(`replaceableClient (${NEEDS_POSTGRES})`, () => {
  let admin: postgres.Sql;
  beforeAll(() => {
    admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  });
  afterAll(async () => {
    await admin.end({ timeout: 2 });
  });

  function open(label: string, opened: postgres.Sql[]) {
    return () => {
      const client = postgres(ADMIN_URL, { max: 2, onnotice: () => {}, fetch_types: false, connection: { application_name: label } });
      opened.push(client);
      return client;
    };
  }

  test('a query that lost its connection retires the client: the next call goes to a fresh one', async () => {
    const label = `replaceable-${process.pid}-lost`;
    const opened: postgres.Sql[] = [];
    const pool = replaceableClient(open(label, opened), 1);
    try {
      // terminated while its query runs: the query fails with the session (57P01, FATAL)
      const running = pool.sql`select pg_sleep(30)`.then(
        () => undefined,
        (error: unknown) => error,
      );
      await waitFor(
        async () => {
          const [row] = await admin<{ n: number }[]>`
            select count(pg_terminate_backend(pid))::int as n from pg_stat_activity where application_name = ${label} and query like '%pg_sleep%'`;
          return row?.n === 1;
        },
        { timeoutMs: 20_000, what: 'the pool to run its query' },
      );
      expect(await running).toMatchObject({ code: expect.stringMatching(/^57P01$|^CONNECTION_CLOSED$/) });
      expect(pool.replacements()).toBe(1);
      const [again] = await pool.sql<{ n: number }[]>`select 2 as n`;
      expect(again?.n).toBe(2);
      expect(opened).toHaveLength(2);
    } finally {
      await pool.end(1);
    }
  });

  test('a failed statement on a live session replaces nothing, and every forwarded call reaches the current client', async () => {
    const opened: postgres.Sql[] = [];
    const pool = replaceableClient(open(`replaceable-${process.pid}-live`, opened), 1);
    try {
      await expect(pool.sql.unsafe('select 1/0')).rejects.toMatchObject({ code: '22012' });
      await expect(pool.sql`select nope`).rejects.toMatchObject({ code: '42703' });
      expect(await pool.sql.begin((tx) => tx`select 3 as n`)).toEqual([{ n: 3 }]);
      expect(pool.sql.options.max).toBe(2);
      expect(pool.replacements()).toBe(0);
      expect(opened).toHaveLength(1);
    } finally {
      await pool.end(1);
    }
  });

  test('a query is not run by being watched: postgres.js queries stay lazy until awaited', async () => {
    const label = `replaceable-${process.pid}-lazy`;
    const pool = replaceableClient(open(label, []), 1);
    try {
      const pending = pool.sql`select pg_sleep(0)`;
      await new Promise((resolve) => setTimeout(resolve, 100));
      const [row] = await admin<{ n: number }[]>`select count(*)::int as n from pg_stat_activity where application_name = ${label}`;
      expect(row?.n).toBe(0);
      await pending;
    } finally {
      await pool.end(1);
    }
  });
});
