import { hostname } from 'node:os';

// The lease session's application_name carries the holder's OS pid and host, so `status` (and an
// operator in pg_stat_activity) can name the daemon holding a feed, not just a Postgres backend.
// Never a feed name: every login may read pg_stat_activity, and a feed is a tenant (issue 33 §4);
// which feeds a session leads is in feed_leases (holder_pid), which only the runtime role reads.

/** `intake-sync[<pid>] lease @<host>`; the `intake-sync[<pid>]` prefix is the pool's too. */
export function leaseApplicationName(pid: number, host: string): string {
  return `intake-sync[${pid}] lease @${host}`;
}

/** This process's lease application_name. */
export function ownLeaseApplicationName(): string {
  return leaseApplicationName(process.pid, hostname());
}

/** The daemon behind a lease session's application_name; undefined for a name we did not set (the URL's own). Pure. */
export function parseLeaseApplicationName(name: string | null | undefined): { pid: number; host: string | null } | undefined {
  const match = /^intake-sync\[(\d+)\] lease(?: @(\S+))?/.exec(name ?? '');
  if (!match) return undefined;
  return { pid: Number(match[1]), host: match[2] ?? null };
}
