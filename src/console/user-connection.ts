import type postgres from 'postgres';
import { createPostgresClient } from '../db/postgres-client.js';

/** Where the database is (from DATABASE_URL) and how to reach it, without anyone's credentials. */
export interface DatabaseTarget {
  /** DATABASE_URL reduced to host, port, database and the server-verification TLS parameters */
  url: string;
  caFile?: string | undefined;
  /** the deployment's schema (DATABASE_SCHEMA) */
  schema: string;
  /** DATABASE_URL's user name (never its password): the console refuses that role at sign-in */
  urlRole?: string | undefined;
}

/** The URL parameters the console keeps: how to find and verify the server, nothing that authenticates a client. */
const KEPT_PARAMETERS = new Set(['sslmode', 'sslrootcert', 'sslnegotiation', 'host', 'port', 'dbname']);

/**
 * DATABASE_URL's host, port and database (and the TLS parameters that verify the server), with its
 * user name, password, client certificate and every other parameter dropped: the console never
 * queries as the URL's role (the runtime's or the owner's), only as the signed-in one. The user
 * name is kept apart, to refuse that role at sign-in.
 */
export function databaseTarget(databaseUrl: string, schema: string, caFile?: string): DatabaseTarget {
  const url = new URL(databaseUrl);
  const urlRole = decodeURIComponent(url.username) || url.searchParams.get('user') || undefined;
  url.username = '';
  url.password = '';
  for (const name of [...url.searchParams.keys()]) if (!KEPT_PARAMETERS.has(name)) url.searchParams.delete(name);
  return { url: url.toString(), caFile, schema, urlRole };
}

/**
 * A connection of the signed-in role's own (one socket: CONSOLE_MAX_CONNECTIONS counts one backend
 * per session), proven with one query: a wrong password or unknown role throws here. Statements
 * time out so a page never hangs the server.
 */
export async function connectAsRole(target: DatabaseTarget, role: string, password: string): Promise<postgres.Sql> {
  const sql = createPostgresClient(
    target.url,
    {
      username: role,
      password,
      max: 1,
      connect_timeout: 10,
      idle_timeout: 300,
      fetch_types: false,
      onnotice: () => {},
      // jit off: every page is a few index lookups, and with planner statistics a page's estimated cost
      // passed jit_above_cost, so each request compiled its plan first: about 1 s of a prescriptions
      // search that ran in 20 ms (bench:console at 1M, after ANALYZE; the overdue scrape does the same)
      connection: {
        application_name: 'intake-sync-console',
        statement_timeout: 15_000,
        idle_in_transaction_session_timeout: 30_000,
        jit: 'off',
      },
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
