import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { queryRows, type Database } from '../../../src/db/connection.js';
import type { Sandbox } from '../../../src/sandbox/server.js';
import { leaseHolder } from '../../../src/sync/leadership/lease.js';

/** Writes a FEEDS_FILE: feed i is the simulator's credential i (so its event ids are its tenant's own). */
export function writeFeedsFile(dir: string, feeds: ReadonlyArray<{ name: string; sandbox: Sandbox; credential: number }>): string {
  const path = join(dir, `feeds-${feeds.length}-${Date.now()}.json`);
  writeFileSync(
    path,
    JSON.stringify(
      feeds.map(({ name, sandbox, credential }) => {
        const c = sandbox.credentials[credential];
        if (!c) throw new Error(`the simulator has no credential ${credential}`);
        return { name, base_url: sandbox.baseUrl, api_key: c.key, api_secret: c.secret };
      }),
    ),
  );
  return path;
}

/** Which CLI process (by its OS pid, from application_name `intake-sync[pid]`) leads each feed; null when none. */
export async function leadersByFeed(database: Database, feeds: readonly string[]): Promise<Map<string, number | null>> {
  const leaders = new Map<string, number | null>();
  for (const feed of feeds) {
    const holder = await leaseHolder(database, feed);
    if (!holder) {
      leaders.set(feed, null);
      continue;
    }
    const [row] = await queryRows<{ application_name: string }>(
      database.db,
      sql`select application_name from pg_stat_activity where pid = ${holder.pid}::int`,
    );
    const pid = /^intake-sync\[(\d+)\]/.exec(row?.application_name ?? '')?.[1];
    leaders.set(feed, pid === undefined ? null : Number(pid));
  }
  return leaders;
}

/** This process's connections to the server right now, by what they are for (the lock session names itself). */
export async function connectionsOf(database: Database, pid: number): Promise<{ lease: number; other: number }> {
  const [row] = await queryRows<{ lease: number; other: number }>(
    database.db,
    sql`select count(*) filter (where application_name like ${`intake-sync[${pid}] lease%`})::int as lease,
               count(*) filter (where application_name = ${`intake-sync[${pid}]`})::int as other
          from pg_stat_activity`,
  );
  return { lease: Number(row?.lease ?? 0), other: Number(row?.other ?? 0) };
}
