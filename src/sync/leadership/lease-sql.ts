import { FEED_NAME_PATTERN } from '../../db/feed-name.js';
import { schemaNameProblem } from '../../db/schema-name.js';

/**
 * The statements of the table-backed feed lease (drizzle/0017_lock_tables.sql): feed_leases holds
 * each feed's holder, lease_members the live replicas. Every statement is ONE autocommit statement
 * sent with the simple protocol and no parameters (see lease-session.ts), so only checked values go
 * into the text: the schema (a plain identifier), feed names (FEED_NAME_PATTERN), the session's id
 * (a UUID) and integers. No transaction stays open between statements: a lease holds no row lock and
 * never holds back vacuum.
 *
 * Each statement serves MANY feeds at once (the lease checks that arrived together, lease-batch.ts),
 * so a replica's lease traffic does not grow with its feeds. A statement that locks several
 * feed_leases rows locks them in feed order: two replicas' statements over overlapping feeds then
 * never wait on each other in a cycle (a deadlock would end one replica's whole session).
 *
 * A lease or a membership is alive while its heartbeat is younger than the TTL AND the backend that
 * wrote it still exists: a killed holder's lease is free at once (its session ended), a frozen one's
 * once the server ends its idle session or the TTL passes, whichever comes first.
 */
export interface LeaseSql {
  /** joins the replicas (upsert of this session's member row) and forgets dead members; returns pid */
  join(): string;
  /**
   * Heartbeat of the member row and takes, in the order given, at most (share - held) of the feeds
   * that are free (expired, their holder's backend gone, or already this session's); the share
   * ceil(feeds / members) is counted in the same statement. Returns taken (comma-separated feeds,
   * null for none), members and pid.
   */
  take(feeds: readonly string[], share: { feeds: number; held: number }): string;
  /** heartbeat of the feeds' leases this session holds and of the member row; returns held (comma-separated, null for none), members and pid */
  check(feeds: readonly string[]): string;
  /** gives the feeds up (only those this session holds) */
  release(feeds: readonly string[]): string;
  /** gives every lease of this session up and leaves the replicas */
  leave(): string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** a statement names at most this many feeds (a deployment's FEEDS_FILE is far smaller; the text stays bounded) */
export const MAX_FEEDS_PER_STATEMENT = 10_000;

/** Pure: the statements for one lock session `holder` of `schema`, a lease living `ttlMs` without a heartbeat. */
export function leaseSql(schema: string, holder: string, ttlMs: number): LeaseSql {
  const problem = schemaNameProblem(schema);
  if (problem) throw new Error(`schema name ${JSON.stringify(schema)} ${problem}`);
  if (!UUID.test(holder)) throw new Error('a lease holder id must be a lower-case UUID');
  if (!Number.isInteger(ttlMs) || ttlMs < 1) throw new Error('the lease TTL must be a positive whole number of milliseconds');
  const leases = `"${schema}"."feed_leases"`;
  const members = `"${schema}"."lease_members"`;
  const me = `'${holder}'`;
  const expiry = `now() + interval '${ttlMs} milliseconds'`;
  const alive = (pid: string) => `exists (select 1 from pg_catalog.pg_stat_activity a where a.pid = ${pid})`;
  const free = (l: string) =>
    `(${l}.expires_at <= now() or not ${alive(`${l}.holder_pid`)} or (${l}.holder = ${me} and ${l}.holder_pid = pg_backend_pid()))`;
  const beat = `insert into ${members} as m (member, backend_pid, expires_at) values (${me}, pg_backend_pid(), ${expiry})
                  on conflict (member) do update set backend_pid = excluded.backend_pid, expires_at = excluded.expires_at`;
  // the others alive, plus this one (its own upsert is not visible to the statement that writes it)
  const others = `(select count(*)::int from ${members} m where m.member <> ${me} and m.expires_at > now() and ${alive('m.backend_pid')}) + 1`;
  // this session's leases among the feeds, locked in feed order (see above)
  const mine = (feeds: readonly string[]) =>
    `select feed from ${leases} where feed in (${feedList(feeds)}) and holder = ${me} and holder_pid = pg_backend_pid() order by feed for update`;
  return {
    join: () =>
      `with gone as (delete from ${members} m where m.member <> ${me} and (m.expires_at <= now() or not ${alive('m.backend_pid')})),
            joined as (${beat} returning backend_pid)
       select (select backend_pid from joined) as pid`,
    take: (feeds, share) => {
      const total = wholeNumber(share.feeds, 'the number of configured feeds');
      const held = wholeNumber(share.held, 'the number of leases held');
      const wanted = feeds.map((feed, i) => `(${feedLiteral(feed)}, ${i})`).join(', ');
      feedList(feeds); // bounds and duplicates
      return `with beat as (${beat}),
            n as (select ${others} as members),
            wanted (feed, ord) as (values ${wanted}),
            candidate as (select w.feed from wanted w left join ${leases} l on l.feed = w.feed
                           where l.feed is null or ${free('l')}
                           order by w.ord
                           limit greatest(0, greatest(1, ceil(${total}::numeric / greatest(1, (select members from n))))::int - ${held})),
            took as (insert into ${leases} as l (feed, holder, holder_pid, acquired_at, heartbeat_at, expires_at)
                     select c.feed, ${me}, pg_backend_pid(), now(), now(), ${expiry} from candidate c order by c.feed
                     on conflict (feed) do update set holder = excluded.holder, holder_pid = excluded.holder_pid, acquired_at = excluded.acquired_at,
                       heartbeat_at = excluded.heartbeat_at, expires_at = excluded.expires_at
                     where ${free('l')}
                     returning l.feed)
       select (select string_agg(feed, ',') from took) as taken, (select members from n) as members, pg_backend_pid() as pid`;
    },
    check: (feeds) =>
      `with held as (${mine(feeds)}),
            lease as (update ${leases} l set heartbeat_at = now(), expires_at = ${expiry} from held where l.feed = held.feed returning l.feed),
            beat as (${beat})
       select (select string_agg(feed, ',') from lease) as held, ${others} as members, pg_backend_pid() as pid`,
    release: (feeds) =>
      `with held as (select feed from ${leases} where feed in (${feedList(feeds)}) and holder = ${me} order by feed for update)
       delete from ${leases} l using held where l.feed = held.feed`,
    leave: () =>
      `with held as (select feed from ${leases} where holder = ${me} order by feed for update),
            gone as (delete from ${leases} l using held where l.feed = held.feed)
       delete from ${members} where member = ${me}`,
  };
}

/** The feeds named by a `taken` or `held` column: null is none. */
export function feedsOfColumn(value: unknown): string[] {
  if (value === null || value === undefined) return [];
  if (typeof value !== 'string') throw new Error('a lease statement returned a feed list that is not text');
  const feeds = value.split(',');
  for (const feed of feeds) if (!FEED_NAME_PATTERN.test(feed)) throw new Error('a lease statement returned a feed name no lease can name');
  return feeds;
}

function feedLiteral(feed: string): string {
  if (!FEED_NAME_PATTERN.test(feed)) throw new Error(`feed name ${JSON.stringify(feed)} is not one a lease can name`);
  return `'${feed}'`;
}

function feedList(feeds: readonly string[]): string {
  if (feeds.length === 0) throw new Error('a lease statement needs at least one feed');
  if (feeds.length > MAX_FEEDS_PER_STATEMENT)
    throw new Error(`a lease statement names at most ${MAX_FEEDS_PER_STATEMENT} feeds, not ${feeds.length}`);
  if (new Set(feeds).size !== feeds.length) throw new Error('a lease statement names each feed once');
  return feeds.map(feedLiteral).join(', ');
}

function wholeNumber(value: number, what: string): number {
  if (!Number.isInteger(value) || value < 0) throw new Error(`${what} must be a whole number, not ${value}`);
  return value;
}
