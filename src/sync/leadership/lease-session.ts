import type postgres from 'postgres';
import { withDeadline } from '../../db/deadline.js';
import { type ClientTls, createPostgresClient } from '../../db/postgres-client.js';
import { DEFAULT_TRANSACTION_TIMEOUTS, type TransactionTimeouts, timeoutStartupParameters } from '../../db/transaction-timeouts.js';
import type { Logger } from '../../log.js';
import type { FeedLease } from './feed-lease.js';
import { ownLeaseApplicationName } from './lease-holder-name.js';
import { LEASE_NAMESPACE, leaseName, MEMBERS_NAMESPACE, membersName } from './lease-keys.js';
import { mayTakeLease, mustYieldLease } from './lease-share.js';

export interface LeaseSessionOptions {
  /** every feed this process is configured for: the share is counted over all of them */
  feeds: readonly string[];
  /** the server ends the session after this long without a query (a frozen holder loses its leases) */
  idleTtlMs: number;
  log?: Logger | undefined;
  /** which variable the URL came from (messages) and DATABASE_CA_FILE; default DATABASE_URL */
  tls?: ClientTls | undefined;
  /** lock_timeout and statement_timeout of the lock session (a direct connection: startup parameters) */
  timeouts?: TransactionTimeouts | undefined;
}

/**
 * ONE lock connection per process, whatever the number of feeds: it holds the shared membership
 * lock (so replicas can count each other in pg_locks) and one session advisory lock per feed this
 * replica leads. A replica takes a feed only while it holds fewer than its share
 * (ceil(feeds / members)) and gives one up when it holds more, so replicas spread the feeds and a
 * dead replica's feeds are taken over once its session ends (idle_session_timeout = TTL).
 *
 * Not a connection reserved from the pool: postgres.js 3.4 crashes the process when a query is
 * sent on a reserved connection whose backend was terminated, which is exactly the failure this
 * lease must survive. Once the lock keys are known, every query is a parameterless
 * simple-protocol query: one message, after which the backend is idle. A parameterised query is
 * sent in two halves on first use; a holder frozen between them would leave its backend 'active'
 * mid-protocol, where no idle timeout applies, and its locks held while it stays frozen.
 * Operations are serialised: the share check and the lock it allows are one step.
 */
export class LeaseSession {
  private client: postgres.Sql | undefined;
  private backendPid: number | undefined;
  /** hashtext() of each lease name and of the membership name, resolved once while no lock is held */
  private keys: Map<string, number> | undefined;
  private membersKey: number | undefined;
  /** feeds whose lock this session holds, in the order taken (the last one is given up first) */
  private readonly held = new Set<string>();
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly url: string,
    private readonly schema: string,
    private readonly options: LeaseSessionOptions,
  ) {}

  /** The lease of one configured feed on this session. */
  lease(feed: string): FeedLease {
    if (!this.options.feeds.includes(feed)) throw new Error(`feed ${JSON.stringify(feed)} is not one of this lease session's feeds`);
    return {
      tryAcquire: () => this.serial(() => this.tryAcquire(feed)),
      stillHeld: () => this.serial(() => this.stillHeld(feed)),
      release: () => this.serial(() => this.release(feed)),
    };
  }

  /** Ends the session (every lock with it); a later call opens a new one. */
  async close(): Promise<void> {
    await this.serial(async () => {
      const client = this.client;
      this.forget();
      if (client) await client.end({ timeout: 1 }).catch(() => {});
    });
  }

  /**
   * A lease query with no answer within this is abandoned with its connection (its holders then
   * step down, which is always safe). The cap keeps a stop within its grace period.
   */
  private get deadlineMs(): number {
    return Math.min(2_000, Math.max(1_000, Math.round(this.options.idleTtlMs / 2)));
  }

  private serial<T>(step: () => Promise<T>): Promise<T> {
    const next = this.queue.then(step, step);
    this.queue = next.catch(() => {});
    return next;
  }

  private async tryAcquire(feed: string): Promise<boolean> {
    if (this.held.has(feed)) return this.stillHeld(feed);
    const client = await this.open();
    try {
      const [count] = await this.simple<{ members: number; pid: number }>(
        client,
        `select ${this.membersSql()} as members, pg_backend_pid() as pid`,
        'counting the replicas',
      );
      // a silent reconnect is a new session: without the membership lock, and without any lease
      if (Number(count?.pid) !== this.backendPid) throw new Error('the lock session was replaced by a reconnect');
      if (!mayTakeLease(this.held.size, this.options.feeds.length, Number(count?.members ?? 1))) return false;
      const [row] = await this.simple<{ acquired: boolean }>(
        client,
        `select pg_try_advisory_lock(${LEASE_NAMESPACE}, ${this.keyOf(feed)}) as acquired`,
        'taking the feed lease',
      );
      if (!row?.acquired) return false;
      this.held.add(feed);
      return true;
    } catch (error) {
      this.discard(client);
      throw error;
    }
  }

  private async stillHeld(feed: string): Promise<boolean> {
    const client = this.client;
    if (!client || this.backendPid === undefined || !this.held.has(feed)) return false;
    try {
      // the client reconnects a dropped connection silently, so ask whether *this* session still owns the lock
      const [row] = await this.simple<{ held: boolean; members: number; pid: number }>(
        client,
        `select ${this.ownsSql(LEASE_NAMESPACE, this.keyOf(feed), 'ExclusiveLock')} as held, ${this.membersSql()} as members,
                pg_backend_pid() as pid`,
        'checking the feed lease',
      );
      if (!row || Number(row.pid) !== this.backendPid) {
        // a silent reconnect: every lease of the old session is gone
        this.discard(client);
        return false;
      }
      if (row.held !== true) {
        this.held.delete(feed);
        return false;
      }
      // more than its share (a replica joined): the most recently taken feed is given up, one per check
      if (mustYieldLease(this.held.size, this.options.feeds.length, Number(row.members)) && [...this.held].at(-1) === feed) {
        this.options.log?.info(
          { feed, held: this.held.size, members: Number(row.members) },
          "holding more than this replica's share of the feeds: giving one up",
        );
        await this.unlock(client, feed);
        return false;
      }
      return true;
    } catch {
      // unanswered or failed: step down, and never trust this connection again
      this.discard(client);
      return false;
    }
  }

  private async release(feed: string): Promise<void> {
    const client = this.client;
    if (!client || !this.held.has(feed)) {
      this.held.delete(feed);
      return;
    }
    try {
      // unlock explicitly: a standby should take it now, not when this session ends
      await this.unlock(client, feed);
    } catch {
      // unanswered: the whole session goes, and its locks with it
      this.discard(client);
    }
  }

  private async unlock(client: postgres.Sql, feed: string): Promise<void> {
    this.held.delete(feed);
    await this.simple(client, `select pg_advisory_unlock(${LEASE_NAMESPACE}, ${this.keyOf(feed)})`, 'releasing the feed lease');
  }

  /** The session, opened with its membership lock held. */
  private async open(): Promise<postgres.Sql> {
    if (this.client && this.backendPid !== undefined) return this.client;
    const client = (this.client ??= createPostgresClient(
      this.url,
      {
        max: 1,
        onnotice: () => {},
        connect_timeout: 10,
        // see connection.ts: the lookup's dropped promise could end the process on a terminated backend
        fetch_types: false,
        connection: {
          // the operator's application_name from the URL as given; else ours: the daemon's pid and host, and its feeds
          application_name: new URL(this.url).searchParams.get('application_name') || ownLeaseApplicationName(this.options.feeds),
          idle_session_timeout: Math.max(1, Math.round(this.options.idleTtlMs)),
          // the lease never waits for a lock (pg_try_advisory_lock); an unanswered statement still ends
          ...timeoutStartupParameters(this.options.timeouts ?? DEFAULT_TRANSACTION_TIMEOUTS),
        },
      },
      this.options.tls ?? { variable: 'DATABASE_URL' },
    ));
    try {
      await this.resolveKeys(client);
      const [row] = await this.simple<{ member: boolean; pid: number }>(
        client,
        `select pg_try_advisory_lock_shared(${MEMBERS_NAMESPACE}, ${this.membersKey}) as member, pg_backend_pid() as pid`,
        'joining the replicas',
      );
      // shared: only an exclusive holder could refuse it, and nothing takes it exclusively
      if (!row?.member) throw new Error('could not take the shared membership lock');
      this.backendPid = Number(row.pid);
      return client;
    } catch (error) {
      this.discard(client);
      throw error;
    }
  }

  /** Resolved with a parameterised query, before any lock is held on the session (see the class comment). */
  private async resolveKeys(client: postgres.Sql): Promise<void> {
    if (this.keys && this.membersKey !== undefined) return;
    const names = [...this.options.feeds.map((feed) => leaseName(this.schema, feed)), membersName(this.schema)];
    const rows = await withDeadline(
      // JSON text, not an array parameter: array types are never looked up (fetch_types: false)
      client<
        { name: string; key: number }[]
      >`select name, hashtext(name) as key from json_array_elements_text(${JSON.stringify(names)}::text::json) as name`.execute(),
      this.deadlineMs,
      'resolving the feed lease keys',
    );
    const byName = new Map(rows.map((r) => [r.name, Number(r.key)]));
    const keys = new Map<string, number>();
    for (const feed of this.options.feeds) {
      const key = byName.get(leaseName(this.schema, feed));
      if (key === undefined || !Number.isInteger(key)) throw new Error('hashtext() returned no integer for a feed lease key');
      keys.set(feed, key);
    }
    const members = byName.get(membersName(this.schema));
    if (members === undefined || !Number.isInteger(members)) throw new Error('hashtext() returned no integer for the membership key');
    this.keys = keys;
    this.membersKey = members;
  }

  private keyOf(feed: string): number {
    const key = this.keys?.get(feed);
    if (key === undefined) throw new Error(`no lock key resolved for feed ${JSON.stringify(feed)}`);
    return key;
  }

  /** Whether this backend holds the advisory lock (classid, key) in `mode`. Only integers go in. */
  private ownsSql(classid: number, key: number, mode: 'ExclusiveLock' | 'ShareLock'): string {
    return `exists (select 1 from pg_locks where locktype = 'advisory' and pid = pg_backend_pid() and granted and mode = '${mode}'
              and classid = ${classid}::oid and objid = (${key}::bigint & 4294967295)::oid and objsubid = 2)`;
  }

  /** The live replicas of this deployment: holders of the shared membership lock in this database. */
  private membersSql(): string {
    return `(select count(*)::int from pg_locks where locktype = 'advisory' and granted and objsubid = 2
              and database = (select oid from pg_database where datname = current_database())
              and classid = ${MEMBERS_NAMESPACE}::oid and objid = (${this.membersKey}::bigint & 4294967295)::oid)`;
  }

  /** Only integers this class produced are ever interpolated into `text`. */
  private simple<T extends Record<string, unknown>>(client: postgres.Sql, text: string, what: string): Promise<T[]> {
    return withDeadline(client.unsafe<T[]>(text).simple().execute(), this.deadlineMs, what) as Promise<T[]>;
  }

  private forget(): void {
    this.client = undefined;
    this.backendPid = undefined;
    this.held.clear();
  }

  private discard(client: postgres.Sql): void {
    if (this.client !== client) return;
    this.forget();
    // timeout 0: a query on it may never be answered; closing the socket ends the session and its locks
    void client.end({ timeout: 0 }).catch(() => {});
  }
}
