import { randomUUID } from 'node:crypto';
import type postgres from 'postgres';
import { withDeadline } from '../../db/deadline.js';
import { FEED_NAME_PATTERN } from '../../db/feed-name.js';
import { type ClientTls, createPostgresClient } from '../../db/postgres-client.js';
import { storeNames } from '../../db/store-names.js';
import { DEFAULT_TRANSACTION_TIMEOUTS, type TransactionTimeouts, timeoutStartupParameters } from '../../db/transaction-timeouts.js';
import type { Logger } from '../../log/log.js';
import type { FeedLease } from './feed-lease.js';
import { ownLeaseApplicationName } from './lease-holder-name.js';
import { feedsOfColumn, leaseSql, MAX_FEEDS_PER_STATEMENT } from './lease-sql.js';
import { LeaseCalls, type LeaseRound, type LeaseRoundResult } from './lease-batch.js';
import { leasesToYield } from './lease-share.js';
import { MemberCount } from './member-count.js';

export interface LeaseSessionOptions {
  /** every feed this process is configured for: the share is counted over all of them */
  feeds: readonly string[];
  /** a lease without a heartbeat for this long is free, and the server ends the session after this long without a query */
  idleTtlMs: number;
  log?: Logger | undefined;
  /** which variable the URL came from (messages) and DATABASE_CA_FILE; default DATABASE_URL */
  tls?: ClientTls | undefined;
  /** lock_timeout and statement_timeout of the lock session (a direct connection: startup parameters) */
  timeouts?: TransactionTimeouts | undefined;
  /**
   * Resolves when the lease calls that arrive together have arrived (default: after DEFAULT_GATHER_MS);
   * they are then answered by one round of statements. Tests pass an explicit promise.
   */
  gather?: (() => Promise<void>) | undefined;
  /** the clock the member count's age is read on (default Date.now) */
  now?: (() => number) | undefined;
}

/**
 * How long a lease call waits for the others of its lease check. Workers answered by one round
 * sleep the same LEASE_RETRY_MS and call again together, drifting apart only by what they do in
 * between (milliseconds): a short window gathers them again, at a delay far below any lease timing.
 */
export const DEFAULT_GATHER_MS = 20;

/**
 * ONE lock connection per process, whatever the number of feeds: it keeps this replica's row in
 * lease_members (so replicas can count each other) and holds, in feed_leases, the lease of each feed
 * this replica leads (drizzle/0017_lock_tables.sql, statements in lease-sql.ts). A replica takes a
 * feed only while it holds fewer than its share (ceil(feeds / members)) and gives the excess up
 * when it holds more (the feeds it took last), so replicas spread the feeds. A lease is free once its holder's backend is gone (a dead
 * replica's feeds are taken over at once) or its heartbeat is older than the TTL; the server also
 * ends this session after the TTL without a query (idle_session_timeout), so a frozen holder's
 * backend goes too.
 *
 * Rows of tables only the runtime role and the owner may write, not advisory locks: any login may
 * take any advisory lock, and one that took the feed keys stalled every feed (issue 25). No
 * transaction stays open: each statement is its own, and holds its row lock only while it runs.
 *
 * Not a connection reserved from the pool: postgres.js 3.4 crashes the process when a query is
 * sent on a reserved connection whose backend was terminated, which is exactly the failure this
 * lease must survive. Every query is a parameterless simple-protocol query: one message, after
 * which the backend is idle. A parameterised query is sent in two halves on first use; a holder
 * frozen between them would leave its backend 'active' mid-protocol, where no idle timeout applies,
 * and its leases alive while it stays frozen.
 *
 * The feed workers' calls are coalesced (lease-batch.ts): the calls that arrive together, or while a
 * round of statements is in flight, are answered by one round, whose statements each serve all of
 * them (lease-sql.ts). A round is at most four statements (release, check, give up the excess,
 * take), so a lease check costs O(1) statements per replica, not one per feed. Rounds are serialised
 * with each other and with close(); the share count and the take it allows are one statement.
 */
export class LeaseSession {
  private client: postgres.Sql | undefined;
  private backendPid: number | undefined;
  /** this session's statements; its id is new for each LeaseSession */
  private readonly sql: ReturnType<typeof leaseSql>;
  /** feeds whose lease this session holds, in the order taken (the last one is given up first) */
  private readonly held = new Set<string>();
  /** the feeds this process is configured for now (a reload changes them: setFeeds) */
  private feeds: readonly string[];
  private queue: Promise<unknown> = Promise.resolve();
  /** the feed workers' calls, answered together (lease-batch.ts) */
  private readonly calls: LeaseCalls;
  /** the replicas this session's last check or take counted (fresh within half a lease TTL) */
  private readonly members: MemberCount;

  constructor(
    private readonly url: string,
    schema: string,
    private readonly options: LeaseSessionOptions,
  ) {
    storeNames(schema);
    this.feeds = checkedFeeds(options.feeds);
    this.sql = leaseSql(schema, randomUUID(), Math.max(1, Math.round(options.idleTtlMs)));
    this.members = new MemberCount(options.idleTtlMs / 2, options.now);
    this.calls = new LeaseCalls({
      run: (round) => this.serial(() => this.round(round)),
      maxFeedsPerKind: MAX_FEEDS_PER_STATEMENT,
      gather: options.gather ?? (() => new Promise<void>((resolve) => setTimeout(resolve, DEFAULT_GATHER_MS))),
    });
  }

  /**
   * The feeds of a reloaded FEEDS_FILE: the share is counted over them from the next statement on.
   * A removed feed's worker releases its lease when it stops (leader-loop.ts), before this is called.
   */
  setFeeds(feeds: readonly string[]): void {
    this.feeds = checkedFeeds(feeds);
  }

  /** The lease of one configured feed on this session. */
  lease(feed: string): FeedLease {
    if (!this.feeds.includes(feed)) throw new Error(`feed ${JSON.stringify(feed)} is not one of this lease session's feeds`);
    return {
      tryAcquire: () => this.calls.tryAcquire(feed),
      stillHeld: () => this.calls.stillHeld(feed),
      release: () => this.calls.release(feed),
    };
  }

  /** Gives every lease up and ends the session; a later call opens a new one. */
  async close(): Promise<void> {
    await this.serial(async () => {
      const client = this.client;
      const joined = this.backendPid !== undefined;
      this.forget();
      if (!client) return;
      // best effort: a standby may take the feeds now, not once this backend is gone
      if (joined) await this.simple(client, this.sql.leave(), 'leaving the replicas').catch(() => {});
      await client.end({ timeout: 1 }).catch(() => {});
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

  /** One round of coalesced calls (lease-batch.ts): at most a release, a check, a yield and a take statement, whatever the feeds. */
  private async round(round: LeaseRound): Promise<LeaseRoundResult> {
    const client = this.client;
    await this.releaseAll(round.releases);
    // a take of a feed already held is its check (and keeps the feed's place in the order taken)
    const retakes = new Set(round.takes.filter((feed) => this.held.has(feed)));
    const held = await this.checkAll([...round.checks, ...retakes]);
    const wanted = round.takes.filter((feed) => !retakes.has(feed));
    // at its share by the last count (member-count.ts): a take would take nothing
    if (wanted.length === 0 || this.members.atShare(this.held.size, this.feeds.length)) return { held, taken: new Set() };
    // the session failed in this round: its leaders hear it now, and the takes retry on a new one next time
    if (client !== undefined && this.client !== client) return { held, taken: new Error('the lock session was lost') };
    try {
      return { held, taken: await this.takeAll(wanted) };
    } catch (error) {
      return { held, taken: error instanceof Error ? error : new Error(String(error)) };
    }
  }

  private async takeAll(feeds: string[]): Promise<Set<string>> {
    const client = await this.open();
    try {
      const [row] = await this.simple<{ taken: unknown; members: number; pid: number }>(
        client,
        this.sql.take(feeds, { feeds: this.feeds.length, held: this.held.size }),
        'taking feed leases',
      );
      // a silent reconnect is a new session: its backend is not the one the leases name
      if (Number(row?.pid) !== this.backendPid) throw new Error('the lock session was replaced by a reconnect');
      this.members.record(Number(row?.members));
      const taken = new Set(feedsOfColumn(row?.taken));
      // in the order asked, so the feed given up first is the one taken last
      for (const feed of feeds) if (taken.has(feed)) this.held.add(feed);
      return taken;
    } catch (error) {
      this.discard(client);
      throw error;
    }
  }

  /** The feeds among `feeds` this session still holds (their leases and its membership heartbeated), after giving up any above its share. */
  private async checkAll(feeds: string[]): Promise<Set<string>> {
    const client = this.client;
    const mine = feeds.filter((feed) => this.held.has(feed));
    if (!client || this.backendPid === undefined || mine.length === 0) return new Set();
    try {
      // the client reconnects a dropped connection silently, so ask whether *this* session still holds the leases
      const [row] = await this.simple<{ held: unknown; members: number; pid: number }>(
        client,
        this.sql.check(mine),
        'checking feed leases',
      );
      if (!row || Number(row.pid) !== this.backendPid) {
        // a silent reconnect: every lease of the old session is gone
        this.discard(client);
        return new Set();
      }
      this.members.record(Number(row.members));
      const still = new Set(feedsOfColumn(row.held));
      for (const feed of mine) if (!still.has(feed)) this.held.delete(feed);
      // more than its share (a replica joined): the feeds taken last are given up, all of the excess at once
      const excess = leasesToYield(this.held.size, this.feeds.length, Number(row.members));
      const giveUp = excess > 0 ? [...this.held].slice(-excess).filter((feed) => still.has(feed)) : [];
      if (giveUp.length > 0) {
        this.options.log?.info(
          { givingUp: giveUp.length, held: this.held.size, members: Number(row.members) },
          "holding more than this replica's share of the feeds: giving the excess up",
        );
        for (const feed of giveUp) still.delete(feed);
        await this.unlock(client, giveUp);
      }
      return still;
    } catch {
      // unanswered or failed: step down, and never trust this connection again
      this.discard(client);
      return new Set();
    }
  }

  private async releaseAll(feeds: string[]): Promise<void> {
    const client = this.client;
    const mine = feeds.filter((feed) => this.held.has(feed));
    if (!client || mine.length === 0) return;
    try {
      // release explicitly: a standby should take them now, not when this session ends
      await this.unlock(client, mine);
    } catch {
      // unanswered: the whole session goes, and its leases with it (their holder's backend is gone)
      this.discard(client);
    }
  }

  private async unlock(client: postgres.Sql, feeds: string[]): Promise<void> {
    for (const feed of feeds) this.held.delete(feed);
    await this.simple(client, this.sql.release(feeds), 'releasing feed leases');
  }

  /** The session, opened with this replica's member row written. */
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
          // the operator's application_name from the URL as given; else ours: the daemon's pid and host (no feed)
          application_name: new URL(this.url).searchParams.get('application_name') || ownLeaseApplicationName(),
          idle_session_timeout: Math.max(1, Math.round(this.options.idleTtlMs)),
          // a lease statement waits for a row only while another lease statement runs; an unanswered one still ends
          ...timeoutStartupParameters(this.options.timeouts ?? DEFAULT_TRANSACTION_TIMEOUTS),
        },
      },
      this.options.tls ?? { variable: 'DATABASE_URL' },
    ));
    try {
      const [row] = await this.simple<{ pid: number }>(client, this.sql.join(), 'joining the replicas');
      if (row?.pid === undefined || row.pid === null) throw new Error('could not join the replicas');
      this.backendPid = Number(row.pid);
      return client;
    } catch (error) {
      this.discard(client);
      throw error;
    }
  }

  /** Only statements of lease-sql.ts (checked values only) are ever sent. */
  private simple<T extends Record<string, unknown>>(client: postgres.Sql, text: string, what: string): Promise<T[]> {
    return withDeadline(client.unsafe<T[]>(text).simple().execute(), this.deadlineMs, what) as Promise<T[]>;
  }

  private forget(): void {
    this.client = undefined;
    this.backendPid = undefined;
    this.held.clear();
    this.members.forget();
  }

  private discard(client: postgres.Sql): void {
    if (this.client !== client) return;
    this.forget();
    // timeout 0: a query on it may never be answered; closing the socket ends the session (its leases are then free)
    void client.end({ timeout: 0 }).catch(() => {});
  }
}

function checkedFeeds(feeds: readonly string[]): readonly string[] {
  for (const feed of feeds)
    if (!FEED_NAME_PATTERN.test(feed)) throw new Error(`feed name ${JSON.stringify(feed)} is not one a lease can name`);
  return [...feeds];
}
