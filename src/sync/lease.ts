import { sql as drizzleSql } from 'drizzle-orm';
import postgres from 'postgres';
import { applicationName, queryRows, type Database } from '../db/connection.js';
import { withDeadline } from '../db/deadline.js';

/**
 * First half of the advisory lock key: constant for this application ("inta"),
 * so our locks never collide with another application's single-key locks.
 * The second half is hashtext('intake-sync:' || schema || ':' || feed).
 */
export const LEASE_NAMESPACE = 0x696e7461;

/** The right to consume one feed: at most one process holds it. */
export interface FeedLease {
  /** Takes the lease if free; false when another process holds it. Throws when the DB is unreachable. */
  tryAcquire(): Promise<boolean>;
  /** Whether this process still holds it (false after the lock's connection died). Never throws. */
  stillHeld(): Promise<boolean>;
  /** Gives it up; safe to call when not held or when the connection is gone. */
  release(): Promise<void>;
}

export interface AdvisoryLeaseOptions {
  feed: string;
  /** the store's postgres:// URL: the lock gets a connection of its own (unused on PGlite) */
  url: string | undefined;
  /**
   * The server ends the lock's session after this long without a query, so a
   * frozen holder (SIGSTOP, a VM pause) loses the lock and a standby takes
   * over. Holders run stillHeld() well within it.
   */
  idleTtlMs: number;
}

/** The lease for this store: an advisory lock on Postgres, trivially held on single-process PGlite. */
export function createFeedLease(database: Database, options: AdvisoryLeaseOptions): FeedLease {
  if (database.kind !== 'postgres') return embeddedLease;
  if (!options.url) throw new Error('a Postgres feed lease needs the database URL for its own connection');
  return new AdvisoryLease(options.url, database.names.schema, options);
}

/**
 * A session advisory lock on a single-connection client of its own. Not a
 * connection reserved from the pool: postgres.js 3.4 crashes the process when
 * a query is sent on a reserved connection whose backend was terminated, which
 * is exactly the failure this lease must survive.
 *
 * Once the lock key is known, every query on this session is a parameterless
 * simple-protocol query: one message, after which the backend is idle. A
 * parameterised postgres.js query is sent in two halves on first use (Parse +
 * Describe, then Bind + Execute + Sync once the parameter types are back); a
 * holder frozen between the halves leaves its backend 'active' mid-protocol,
 * where no idle timeout applies, and the lock would be held for as long as the
 * process stays frozen.
 */
class AdvisoryLease implements FeedLease {
  private client: postgres.Sql | undefined;
  private backendPid: number | undefined;
  /** hashtext('intake-sync:' || schema || ':' || feed), resolved once while no lock is held */
  private lockKey: number | undefined;

  constructor(
    private readonly url: string,
    private readonly schema: string,
    private readonly options: AdvisoryLeaseOptions,
  ) {}

  /**
   * A lease query with no answer within this is abandoned with its connection (a leader then
   * steps down, which is always safe). The queries are trivial; the cap keeps a stop within its
   * grace period even when the unlock itself goes unanswered.
   */
  private get deadlineMs(): number {
    return Math.min(2_000, Math.max(1_000, Math.round(this.options.idleTtlMs / 2)));
  }

  async tryAcquire(): Promise<boolean> {
    if (this.backendPid !== undefined) return this.stillHeld();
    const client = (this.client ??= postgres(this.url, {
      max: 1,
      onnotice: () => {},
      connect_timeout: 10,
      // see connection.ts: the lookup's dropped promise could end the process on a terminated backend
      fetch_types: false,
      connection: { application_name: `${applicationName()} lease ${this.options.feed}`, idle_session_timeout: Math.max(1, Math.round(this.options.idleTtlMs)) },
    }));
    try {
      const key = await this.resolveLockKey(client);
      const [row] = await this.simpleQuery<{ acquired: boolean; pid: number }>(
        client,
        `select pg_try_advisory_lock(${LEASE_NAMESPACE}, ${key}) as acquired, pg_backend_pid() as pid`,
        'taking the feed lease',
      );
      if (!row?.acquired) return false;
      this.backendPid = row.pid;
      return true;
    } catch (error) {
      this.discardClient(client);
      throw error;
    }
  }

  async stillHeld(): Promise<boolean> {
    const client = this.client;
    const key = this.lockKey;
    if (!client || this.backendPid === undefined || key === undefined) return false;
    try {
      // the client reconnects a dropped connection silently, so ask whether
      // *this* session still owns the lock rather than whether a query works
      const [row] = await this.simpleQuery<{ held: boolean }>(
        client,
        `select pg_backend_pid() = ${this.backendPid} and exists (
           select 1 from pg_locks
            where locktype = 'advisory' and pid = pg_backend_pid() and granted
              and classid = ${LEASE_NAMESPACE}::oid and objid = (${key}::bigint & 4294967295)::oid and objsubid = 2) as held`,
        'checking the feed lease',
      );
      return row?.held === true;
    } catch {
      // unanswered or failed: step down, and never trust this connection again
      this.discardClient(client);
      return false;
    }
  }

  async release(): Promise<void> {
    const client = this.client;
    const held = this.backendPid !== undefined && this.lockKey !== undefined;
    this.client = undefined;
    this.backendPid = undefined;
    if (!client) return;
    try {
      // unlock explicitly: the server frees a closed session's locks only once its backend has exited,
      // and a standby should not wait for that (on a new session after a reconnect this is a no-op)
      if (held) await this.simpleQuery(client, `select pg_advisory_unlock(${LEASE_NAMESPACE}, ${this.lockKey})`, 'releasing the feed lease');
    } catch {
      // the session is gone or unanswering, and its lock goes with it once the client is closed
    } finally {
      await client.end({ timeout: 1 }).catch(() => {});
    }
  }

  private async resolveLockKey(client: postgres.Sql): Promise<number> {
    if (this.lockKey !== undefined) return this.lockKey;
    const [row] = await withDeadline(
      client<{ key: number }[]>`select hashtext(${leaseName(this.schema, this.options.feed)}) as key`.execute(),
      this.deadlineMs,
      'resolving the feed lease key',
    );
    if (!row || !Number.isInteger(row.key)) throw new Error('hashtext() returned no integer for the feed lease key');
    this.lockKey = row.key;
    return row.key;
  }

  /** Only integers this class produced are ever interpolated into `text`. */
  private simpleQuery<T extends Record<string, unknown>>(client: postgres.Sql, text: string, what: string): Promise<T[]> {
    return withDeadline(client.unsafe<T[]>(text).simple().execute(), this.deadlineMs, what) as Promise<T[]>;
  }

  private discardClient(client: postgres.Sql): void {
    if (this.client !== client) return;
    this.client = undefined;
    this.backendPid = undefined;
    // timeout 0: a query on it may never be answered; closing the socket ends the session and its lock
    void client.end({ timeout: 0 }).catch(() => {});
  }
}

// one process owns an embedded PGlite directory, so there is nobody to exclude
const embeddedLease: FeedLease = {
  tryAcquire: async () => true,
  stillHeld: async () => true,
  release: async () => {},
};

/** Who holds a feed's lease right now (for `status`): the backend pid, or null. */
export async function leaseHolder(database: Database, feed: string): Promise<{ pid: number } | null> {
  if (database.kind !== 'postgres') return null;
  const rows = await queryRows<{ pid: number }>(
    database.db,
    // pg_locks spans the cluster; advisory locks of other databases are not ours
    drizzleSql`select pid from pg_locks
                where locktype = 'advisory' and granted and objsubid = 2
                  and database = (select oid from pg_database where datname = current_database())
                  and classid = ${LEASE_NAMESPACE}::oid
                  and objid = (hashtext(${leaseName(database.names.schema, feed)})::bigint & 4294967295)::oid`,
  );
  const pid = rows[0]?.pid;
  return pid === undefined ? null : { pid: Number(pid) };
}

/** Per schema and feed: two deployments in one database each have their own leader. */
function leaseName(schema: string, feed: string): string {
  return `intake-sync:${schema}:${feed}`;
}
