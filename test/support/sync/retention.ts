import { sql } from 'drizzle-orm';
import type { Db } from '../../../src/db/connection.js';
import { namesOf } from '../../../src/db/store-names.js';
import { sleepUnlessAborted } from '../../../src/lib/loop-sleep.js';
import { purgePass, type PassResult } from '../../../src/sync/retention/purge-pass.js';
import { RETENTION_CLASSES, type RetentionClass, type RetentionPolicy } from '../../../src/sync/retention/retention-classes.js';
import type { TestDatabase } from '../db.js';

export const DAY = 86_400_000;

/** Every class kept forever, except those given. */
export function policy(overrides: Partial<Record<RetentionClass, number | null>> = {}): RetentionPolicy {
  return { ...(Object.fromEntries(RETENTION_CLASSES.map((c) => [c, null])) as Record<RetentionClass, null>), ...overrides };
}

/** One pass of `feed` as the cleaner runs it, at the injected instant `now`. */
export function passAt(
  tdb: TestDatabase,
  db: Db,
  feed: string,
  keep: RetentionPolicy,
  now: number,
  unscopedAuditMs?: number | null,
): Promise<PassResult> {
  return purgePass(
    { feed, policy: keep, unscopedAuditMs },
    {
      db,
      names: namesOf(db),
      now,
      batch: {
        initialRows: 2,
        timeoutMs: 5_000,
        detectWaiters: tdb.url !== undefined,
        limits: { minRows: 1, maxRows: 4, pauseMs: 0, backoffMs: 1, maxBackoffMs: 1 },
      },
      sleep: sleepUnlessAborted,
      signal: new AbortController().signal,
    },
  );
}

/** Empties what retention touches besides the tables truncateStore empties. */
export async function truncateRetention(db: Db): Promise<void> {
  await db.execute(
    sql`truncate intake_sync.audit_entries, intake_sync.change_horizons, intake_sync.retention_runs, intake_sync.owner_settings`,
  );
}
