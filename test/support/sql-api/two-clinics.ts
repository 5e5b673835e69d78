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
  /** with `appForClinicB`: an app role granted clinic-b only */
  appRoleB: string | undefined;
  /** a new session logged in as `role` (an app role by default); notices go to `onnotice` */
  as(role?: string, onnotice?: (notice: postgres.Notice) => void): postgres.Sql;
  close(): Promise<void>;
}

/**
 * A fresh database with clinic-a and clinic-b registered and an app role granted clinic-a (real roles);
 * with `appForClinicB`, a second app role granted clinic-b only.
 */
export async function twoClinics(label: string, options: { appForClinicB?: boolean } = {}): Promise<TwoClinics> {
  const tdb = await createTestDatabase(label);
  await registerFeeds(tdb.database.db, [FEED_A, FEED_B], null);
  const owner = postgres(tdb.url ?? '', { max: 1, onnotice: () => {} });
  const appRole = await appRoleFor(owner, `${label.slice(0, 20)}_app_a`, FEED_A);
  const appRoleB = options.appForClinicB ? await appRoleFor(owner, `${label.slice(0, 20)}_app_b`, FEED_B) : undefined;
  const sessions: postgres.Sql[] = [];
  return {
    tdb,
    owner,
    appRole,
    appRoleB,
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
      for (const role of [appRole, appRoleB]) if (role) await admin.unsafe(`drop role if exists "${role}"`).catch(() => {});
      await admin.end({ timeout: 1 });
    },
  };
}

/** A new login role (tagged for this run's clean-up) granted the app role's rights on `feed` only. */
async function appRoleFor(owner: postgres.Sql, prefix: string, feed: string): Promise<string> {
  const role = `${prefix}_${randomBytes(3).toString('hex')}`;
  await owner.unsafe(`create role "${role}" login`);
  const tag = tagForRun('role', role);
  if (tag) await owner.unsafe(tag);
  await owner.unsafe(grantsScript('app', 'intake_sync', role, { kind: 'feeds', feeds: [feed] }).join('\n'));
  return role;
}
