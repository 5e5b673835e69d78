import { sql as drizzleSql } from 'drizzle-orm';
import { queryRows, type Database } from '../../db/connection.js';
import type { ClientTls } from '../../db/postgres-client.js';
import type { TransactionTimeouts } from '../../db/transaction-timeouts.js';
import type { Logger } from '../../log/log.js';
import { LeaseSession } from './lease-session.js';
import type { FeedLease } from './feed-lease.js';

export type { FeedLease } from './feed-lease.js';

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
  /** which variable the URL came from (messages) and DATABASE_CA_FILE */
  tls?: ClientTls | undefined;
}

/**
 * The lease of one feed on a lock session of its own, closed with the lease (a single-feed
 * process, the tests): a feed_leases row on Postgres (lease-session.ts), trivially held on
 * single-process PGlite.
 */
export function createFeedLease(database: Database, options: AdvisoryLeaseOptions): FeedLease {
  if (database.kind !== 'postgres') return embeddedLease;
  if (!options.url) throw new Error('a Postgres feed lease needs the database URL for its own connection');
  const session = new LeaseSession(options.url, database.names.schema, {
    feeds: [options.feed],
    idleTtlMs: options.idleTtlMs,
    tls: options.tls,
  });
  const lease = session.lease(options.feed);
  return {
    tryAcquire: () => lease.tryAcquire(),
    stillHeld: () => lease.stillHeld(),
    release: async () => {
      await lease.release();
      await session.close();
    },
  };
}

/** Every configured feed's lease on ONE lock session (see lease-session.ts); the caller closes it. */
export interface FeedLeases {
  lease(feed: string): FeedLease;
  /** the configured feeds after a reload: the share is counted over them */
  setFeeds(feeds: readonly string[]): void;
  close(): Promise<void>;
}

/** One lock connection for all of a process's feeds, spreading them over the replicas. */
export function createFeedLeases(
  database: Database,
  options: {
    feeds: readonly string[];
    url: string | undefined;
    idleTtlMs: number;
    log?: Logger;
    tls?: ClientTls | undefined;
    timeouts?: TransactionTimeouts | undefined;
  },
): FeedLeases {
  if (database.kind !== 'postgres') return { lease: () => embeddedLease, setFeeds: () => {}, close: async () => {} };
  if (!options.url) throw new Error('a Postgres feed lease needs the database URL for its own connection');
  const session = new LeaseSession(options.url, database.names.schema, options);
  return { lease: (feed) => session.lease(feed), setFeeds: (feeds) => session.setFeeds(feeds), close: () => session.close() };
}

// one process owns an embedded PGlite directory, so there is nobody to exclude
const embeddedLease: FeedLease = {
  tryAcquire: async () => true,
  stillHeld: async () => true,
  release: async () => {},
};

/** Who holds a feed's lease right now (for `status`), or null. */
export interface LeaseHolder {
  /** the Postgres backend of the holder's lock session */
  pid: number;
  /** the holding session's application_name (the daemon's pid and host: see lease-holder-name.ts) */
  applicationName: string | null;
  /** where the holding session connects from (null: a Unix socket) */
  clientAddr: string | null;
}

export async function leaseHolder(database: Database, feed: string): Promise<LeaseHolder | null> {
  if (database.kind !== 'postgres') return null;
  const n = database.names;
  const rows = await queryRows<{ pid: number; application_name: string | null; client_addr: string | null }>(
    database.db,
    // a live lease: its heartbeat within the TTL and its holder's backend still there (lease-sql.ts)
    drizzleSql`select l.holder_pid as pid, a.application_name, host(a.client_addr) as client_addr
                 from ${n.qualified('feed_leases')} l join pg_catalog.pg_stat_activity a on a.pid = l.holder_pid
                where l.feed = ${feed}::text and l.expires_at > now()`,
  );
  const row = rows[0];
  return row === undefined
    ? null
    : { pid: Number(row.pid), applicationName: row.application_name ?? null, clientAddr: row.client_addr ?? null };
}
