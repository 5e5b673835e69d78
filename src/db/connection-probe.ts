import type postgres from 'postgres';
import { withDeadline } from './deadline.js';
import { type ClientTls, createPostgresClient } from './postgres-client.js';

/** What a postgres:// URL leads to, as far as session-level features are concerned. */
export interface ConnectionProbe {
  /**
   * false when the server refuses a session setting sent at connect time: PgBouncer (any pool
   * mode) rejects startup parameters it does not track unless told to ignore them
   */
  acceptsStartupParameters: boolean;
  /**
   * true when one client connection does not keep one server session: a pooler in transaction
   * (or statement) mode. Session advisory locks, session settings and named prepared statements
   * then land on whichever server connection the next transaction gets.
   */
  transactionPooling: boolean;
  /** why transactionPooling was decided, for the error message */
  evidence: string;
  /** identifies the database reached: the same two values through a pooler and directly */
  database: string;
  serverStartedAt: string;
}

/** A trivial query that waits longer than this for a connection is waiting for another client's transaction. */
const WAIT_MS = 2_000;
const ROUNDS = 2;

/**
 * Probes `url` with two single-connection clients A and B. A reads its backend pid; B opens
 * a transaction and reads its own; A reads its pid again while B's transaction is still open.
 * On a direct connection (or a pooler in session mode) A keeps its session: the two reads agree,
 * B has another pid, and A never waits for B. Behind a transaction pooler A's session went back
 * to the pool after its first statement, so B gets it (PgBouncer hands out the most recently
 * used server connection first) or A gets another one, or, with a pool of one, A must wait for
 * B's transaction to end. Any of the three means session state does not survive between
 * transactions on one connection. Two rounds, to be robust to other clients taking connections.
 */
export async function probeConnection(url: string, tls: ClientTls = { variable: 'DATABASE_URL' }): Promise<ConnectionProbe> {
  const acceptsStartupParameters = await acceptsStartupParameter(url, tls);
  const options = { max: 1, prepare: false, fetch_types: false, connect_timeout: 10, onnotice: () => {} } as const;
  const a = createPostgresClient(url, { ...options, connection: { application_name: 'intake-sync probe a' } }, tls);
  const b = createPostgresClient(url, { ...options, connection: { application_name: 'intake-sync probe b' } }, tls);
  const pid = async (client: postgres.Sql) => Number((await client<{ pid: number }[]>`select pg_backend_pid() as pid`)[0]?.pid);
  try {
    const [identity] = await a<{ database: string; started: string }[]>`
      select current_database() as database, pg_postmaster_start_time()::text as started`;
    let evidence = '';
    for (let round = 0; round < ROUNDS && !evidence; round += 1) {
      const first = await pid(a);
      await b.unsafe('begin');
      try {
        const other = await pid(b);
        const again = await withDeadline(pid(a), WAIT_MS, 'probing for a transaction pooler').catch(() => undefined);
        if (other === first) evidence = `another connection's transaction ran on this connection's server session (pid ${first})`;
        else if (again === undefined) evidence = `a query waited over ${WAIT_MS} ms for another connection's transaction to end`;
        else if (again !== first)
          evidence = `the server session changed between two transactions on one connection (pid ${first}, then ${again})`;
      } finally {
        await b.unsafe('rollback').catch(() => {});
      }
    }
    return {
      acceptsStartupParameters,
      transactionPooling: evidence !== '',
      evidence: evidence || 'one connection kept one server session',
      database: identity?.database ?? '',
      serverStartedAt: identity?.started ?? '',
    };
  } finally {
    await Promise.all([a.end({ timeout: 1 }), b.end({ timeout: 1 })]);
  }
}

/** Connects once with a startup parameter the daemon sends (connection.ts): a pooler that rejects it says so at once. */
async function acceptsStartupParameter(url: string, tls: ClientTls): Promise<boolean> {
  const client = createPostgresClient(
    url,
    {
      max: 1,
      prepare: false,
      fetch_types: false,
      connect_timeout: 10,
      onnotice: () => {},
      connection: { application_name: 'intake-sync probe', idle_in_transaction_session_timeout: 60_000 },
    },
    tls,
  );
  try {
    await client`select 1`;
    return true;
  } catch (error) {
    if (error instanceof Error && /unsupported startup parameter/i.test(error.message)) return false;
    throw error;
  } finally {
    await client.end({ timeout: 1 });
  }
}
