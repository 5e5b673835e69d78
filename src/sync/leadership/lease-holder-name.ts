import { hostname } from 'node:os';

// The lease session's application_name carries the holder's OS pid and host, so `status` (and an
// operator in pg_stat_activity) can name the daemon holding a feed, not just a Postgres backend.
// Postgres keeps 63 bytes of it: pid and host come first, the feeds last (cut first).

/** `intake-sync[<pid>] lease @<host> <feeds>`; the `intake-sync[<pid>]` prefix is the pool's too. */
export function leaseApplicationName(pid: number, host: string, feeds: readonly string[]): string {
  const what = feeds.length === 1 ? feeds[0] : `${feeds.length} feeds`;
  return `intake-sync[${pid}] lease @${host} ${what}`;
}

/** This process's lease application_name. */
export function ownLeaseApplicationName(feeds: readonly string[]): string {
  return leaseApplicationName(process.pid, hostname(), feeds);
}

/** The daemon behind a lease session's application_name; undefined for a name we did not set (the URL's own). Pure. */
export function parseLeaseApplicationName(name: string | null | undefined): { pid: number; host: string | null } | undefined {
  const match = /^intake-sync\[(\d+)\] lease(?: @(\S+))?/.exec(name ?? '');
  if (!match) return undefined;
  return { pid: Number(match[1]), host: match[2] ?? null };
}
