import { randomBytes } from 'node:crypto';
import { tagForRun } from '../test-run.js';
import postgres from 'postgres';
import { grantsScript } from '../../../src/db/grants-script.js';
import { registerFeeds } from '../../../src/db/feed-registry.js';
import { ADMIN_URL, createTestDatabase, type TestDatabase } from '../db.js';

export const FEED_A = 'clinic-a';
export const FEED_B = 'clinic-b';

/** One vendor database holding two feeds, an app role granted clinic-a only, and sessions as it. */
export interface TwoClinics {
  tdb: TestDatabase;
  /** the test's superuser session (the owner's view of everything) */
  owner: postgres.Sql;
  /** the app role granted clinic-a only */
  appRole: string;
  /** a new session logged in as `role` (an app role by default); notices go to `onnotice` */
  as(role?: string, onnotice?: (notice: postgres.Notice) => void): postgres.Sql;
  close(): Promise<void>;
}

/** A fresh database with clinic-a and clinic-b registered and an app role granted clinic-a (real roles). */
export async function twoClinics(label: string): Promise<TwoClinics> {
  const tdb = await createTestDatabase(label);
  await registerFeeds(tdb.database.db, [FEED_A, FEED_B], null);
  const owner = postgres(tdb.url ?? '', { max: 1, onnotice: () => {} });
  const appRole = `${label.slice(0, 20)}_app_a_${randomBytes(3).toString('hex')}`;
  await owner.unsafe(`create role "${appRole}" login`);
  const tag = tagForRun('role', appRole);
  if (tag) await owner.unsafe(tag);
  await owner.unsafe(grantsScript('app', 'intake_sync', appRole, { kind: 'feeds', feeds: [FEED_A] }).join('\n'));
  const sessions: postgres.Sql[] = [];
  return {
    tdb,
    owner,
    appRole,
    as(role = appRole, onnotice = () => {}) {
      const url = new URL(tdb.url ?? '');
      url.username = role;
      const sql = postgres(url.toString(), { max: 1, onnotice, fetch_types: false });
      sessions.push(sql);
      return sql;
    },
    async close() {
      for (const s of sessions) await s.end({ timeout: 1 });
      await owner.end({ timeout: 1 });
      await tdb.drop();
      const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
      await admin.unsafe(`drop role if exists "${appRole}"`).catch(() => {});
      await admin.end({ timeout: 1 });
    },
  };
}
