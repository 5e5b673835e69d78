import postgres from 'postgres';
import { sendStatusWakeup } from '../../../src/db/status-wakeup.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { identityOf, samplePrescription } from '../../../src/sandbox/fixtures.js';
import { NEEDS_POSTGRES, postgresReachable } from '../../support/db.js';
import { FEED_A, FEED_B, type TwoClinics, twoClinics } from '../../support/sql-api/two-clinics.js';

// Issue 33 §2: no commit depends on the notification queue. A login that LISTENs and holds a
// transaction open pins the cluster's queue; once full, PostgreSQL refuses at COMMIT every
// transaction that notifies. No commit notifies (stamp_change_commit); the daemon sends the wake-up
// after a page committed, in a statement of its own (src/db/status-wakeup.ts), so a status commit
// (a page's, an app's registration) commits whatever the queue holds, and followers find the change
// at their next poll. Filling the queue in a test needs a small one:
// max_notify_queue_pages (PostgreSQL 17+), set to 64 by scripts/pg-matrix.sh on its 17 and 18 clusters.
const real = await postgresReachable();
const settings = real ? await serverSettings() : null;
const skipReason = !real
  ? NEEDS_POSTGRES
  : settings === null || settings.version < 170000
    ? 'needs PostgreSQL 17+ (max_notify_queue_pages); the 14-18 matrix (scripts/pg-matrix.sh) runs it on 17 and 18'
    : settings.queuePages > 1024
      ? `max_notify_queue_pages is ${settings.queuePages}: too large to fill here (scripts/pg-matrix.sh sets 64)`
      : null;

async function serverSettings(): Promise<{ version: number; queuePages: number } | null> {
  const { ADMIN_URL } = await import('../../support/db.js');
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  try {
    const [v] = await admin<{ v: number }[]>`select current_setting('server_version_num')::int as v`;
    const [q] = await admin<{ q: string | null }[]>`select current_setting('max_notify_queue_pages', true) as q`;
    return { version: v?.v ?? 0, queuePages: Number(q?.q ?? 'Infinity') };
  } finally {
    await admin.end({ timeout: 1 });
  }
}

describe.skipIf(skipReason !== null)(`a full notification queue fails no commit (${skipReason ?? 'PostgreSQL 17+'})`, () => {
  let c: TwoClinics;
  beforeAll(async () => {
    c = await twoClinics('notify_full');
  });
  afterAll(async () => {
    await c?.close();
  });

  it("a login pins the queue and fills it: clinic-b's app registration and a status commit still commit", {
    timeout: 120_000,
  }, async () => {
    const pinner = c.as('postgres');
    const filler = c.as('postgres');
    const app = c.as();
    let release = () => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    let listened = () => {};
    const listening = new Promise<void>((resolve) => (listened = resolve));
    // the pin: listening (LISTEN takes effect at its commit), then in a transaction left open: it
    // reads no notification until that ends, so the queue's tail cannot pass it
    await pinner.unsafe('listen intake_sync_test_fill');
    const pinned = pinner.begin(async (tx) => {
      await tx`select 1`;
      listened();
      await released;
    });
    try {
      await listening;
      // fill: distinct payloads of ~8 kB each, one transaction at a time, until PostgreSQL refuses a commit
      let refused: { code?: string; message?: string } | undefined;
      for (let round = 0; round < 400 && refused === undefined; round++) {
        refused = await filler
          .begin((tx) =>
            tx.unsafe(`select pg_notify('intake_sync_test_fill', ${round} || ':' || g || repeat('x', 7900)) from generate_series(1, 8) g`),
          )
          .then(
            () => undefined,
            (error: { code?: string; message?: string }) => error,
          );
      }
      expect(refused?.message).toMatch(/too many notifications in the NOTIFY queue/);
      // (pg_notification_queue_usage() may read 0 here: PostgreSQL counts the queue full until a
      // listener truncates it, which is why no commit may notify, not even below a usage threshold)

      // an app's registration with a status change (its held event matched) and a page-like status commit
      const p = samplePrescription(1, { prefix: FEED_A });
      await c.owner`select intake_sync.register_prescription(${p.external_id}, ${JSON.stringify(identityOf(p))}::text::jsonb, ${FEED_A})`;
      await c.owner`update intake_sync.prescriptions set status = 'accepted', status_rank = 1 where feed = ${FEED_A} and external_id = ${p.external_id}`;
      const q = samplePrescription(2, { prefix: FEED_A });
      await app.begin(async (tx) => {
        await tx`select intake_sync.register_prescription(${q.external_id}, ${JSON.stringify(identityOf(q))}::text::jsonb, ${FEED_A})`;
      });
      const [changes] = await c.owner<{ n: number }[]>`select count(*)::int as n from intake_sync.status_changes where feed = ${FEED_A}`;
      expect(changes?.n).toBe(1);
      // the change is there for a follower's poll
      const rows = await app<{ external_id: string }[]>`select external_id from intake_sync.status_changes_since(null, 10)`;
      expect(rows.map((r) => r.external_id)).toEqual([p.external_id]);
      // the daemon's wake-up after a page, outside the page's transaction: refused or skipped, never thrown
      await expect(sendStatusWakeup(c.tdb.database.db)).resolves.toBeUndefined();
      expect(FEED_B).not.toBe(FEED_A);
    } finally {
      release();
      await pinned.catch(() => {});
    }
  });
});
