import { sql } from 'drizzle-orm';
import { queryRows, type Database } from '../../db/connection.js';
import { leaseHolder } from './lease.js';

/**
 * Who holds a feed's lease, in one line for an operator: the backend pid, and from
 * pg_stat_activity the session's application_name (`intake-sync[<os pid>] lease @<host>` unless the
 * URL set one), client address and start. 'nobody' when the lock is free (it was just released).
 */
export async function describeLeaseHolder(database: Database, feed: string): Promise<string> {
  const holder = await leaseHolder(database, feed);
  if (!holder) return 'nobody (it was released meanwhile)';
  const [activity] = await queryRows<{ app: string | null; addr: string | null; since: string | null }>(
    database.db,
    sql`select application_name as app, host(client_addr) as addr, backend_start::text as since
          from pg_stat_activity where pid = ${holder.pid}`,
  );
  const parts = [`backend pid ${holder.pid}`];
  if (activity?.app) parts.push(`application_name "${activity.app}"`);
  if (activity?.addr) parts.push(`from ${activity.addr}`);
  if (activity?.since) parts.push(`connected since ${activity.since}`);
  return parts.join(', ');
}
