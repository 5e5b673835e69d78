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
 * A lease or a membership is alive while its heartbeat is younger than the TTL AND the backend that
 * wrote it still exists: a killed holder's lease is free at once (its session ended), a frozen one's
 * once the server ends its idle session or the TTL passes, whichever comes first.
 */
export interface LeaseSql {
  /** joins the replicas (upsert of this session's member row) and forgets dead members; returns pid */
  join(): string;
  /** heartbeat of the member row; returns members (live replicas, this one included) and pid */
  count(): string;
  /** takes the feed when free (expired, its holder's backend gone, or already this session's); returns taken */
  take(feed: string): string;
  /** heartbeat of the feed's lease and of the member row; returns held, members and pid */
  check(feed: string): string;
  /** gives the feed up (only when this session holds it) */
  release(feed: string): string;
  /** gives every lease of this session up and leaves the replicas */
  leave(): string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

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
  const feedLiteral = (feed: string): string => {
    if (!FEED_NAME_PATTERN.test(feed)) throw new Error(`feed name ${JSON.stringify(feed)} is not one a lease can name`);
    return `'${feed}'`;
  };
  const beat = `insert into ${members} as m (member, backend_pid, expires_at) values (${me}, pg_backend_pid(), ${expiry})
                  on conflict (member) do update set backend_pid = excluded.backend_pid, expires_at = excluded.expires_at`;
  // the others alive, plus this one (its own upsert is not visible to the statement that writes it)
  const others = `(select count(*)::int from ${members} m where m.member <> ${me} and m.expires_at > now() and ${alive('m.backend_pid')}) + 1`;
  return {
    join: () =>
      `with gone as (delete from ${members} m where m.member <> ${me} and (m.expires_at <= now() or not ${alive('m.backend_pid')})),
            joined as (${beat} returning backend_pid)
       select (select backend_pid from joined) as pid`,
    count: () => `with beat as (${beat}) select ${others} as members, pg_backend_pid() as pid`,
    take: (feed) =>
      `insert into ${leases} as l (feed, holder, holder_pid, acquired_at, heartbeat_at, expires_at)
       values (${feedLiteral(feed)}, ${me}, pg_backend_pid(), now(), now(), ${expiry})
       on conflict (feed) do update set holder = excluded.holder, holder_pid = excluded.holder_pid, acquired_at = excluded.acquired_at,
         heartbeat_at = excluded.heartbeat_at, expires_at = excluded.expires_at
       where l.expires_at <= now() or not ${alive('l.holder_pid')} or (l.holder = excluded.holder and l.holder_pid = excluded.holder_pid)
       returning true as taken`,
    check: (feed) =>
      `with lease as (update ${leases} set heartbeat_at = now(), expires_at = ${expiry}
                       where feed = ${feedLiteral(feed)} and holder = ${me} and holder_pid = pg_backend_pid() returning 1),
            beat as (${beat})
       select exists (select 1 from lease) as held, ${others} as members, pg_backend_pid() as pid`,
    release: (feed) => `delete from ${leases} where feed = ${feedLiteral(feed)} and holder = ${me}`,
    leave: () => `with gone as (delete from ${leases} where holder = ${me}) delete from ${members} where member = ${me}`,
  };
}
