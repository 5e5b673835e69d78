import type postgres from 'postgres';
import { createPostgresClient } from '../db/postgres-client.js';

/** Where the database is (from DATABASE_URL) and how to reach it, without anyone's credentials. */
export interface DatabaseTarget {
  /** DATABASE_URL with its user name and password removed */
  url: string;
  caFile?: string | undefined;
  /** the deployment's schema (DATABASE_SCHEMA) */
  schema: string;
}

/**
 * DATABASE_URL's host, port, database and TLS parameters without its credentials: the console
 * never queries as the URL's role (the runtime's or the owner's), only as the signed-in one.
 */
export function databaseTarget(databaseUrl: string, schema: string, caFile?: string): DatabaseTarget {
  const url = new URL(databaseUrl);
  url.username = '';
  url.password = '';
  url.searchParams.delete('user');
  url.searchParams.delete('password');
  return { url: url.toString(), caFile, schema };
}

/**
 * A connection of the signed-in role's own (at most 2 sockets), proven with one query: a wrong
 * password or unknown role throws here. Statements time out so a page never hangs the server.
 */
export async function connectAsRole(target: DatabaseTarget, role: string, password: string): Promise<postgres.Sql> {
  const sql = createPostgresClient(
    target.url,
    {
      username: role,
      password,
      max: 2,
      connect_timeout: 10,
      idle_timeout: 300,
      fetch_types: false,
      onnotice: () => {},
      connection: { application_name: 'intake-sync-console', statement_timeout: 15_000, idle_in_transaction_session_timeout: 30_000 },
    },
    { variable: 'DATABASE_URL', caFile: target.caFile },
  );
  try {
    await sql`select 1`;
    return sql;
  } catch (error) {
    await sql.end({ timeout: 1 }).catch(() => {});
    throw error;
  }
}
