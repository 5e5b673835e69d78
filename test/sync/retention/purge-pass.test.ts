import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { queryRows, type Db } from '../../../src/db/connection.js';
import { recordOwnerSettings } from '../../../src/db/owner-settings.js';
import { namesOf } from '../../../src/db/store-names.js';
import { samplePrescription } from '../../../src/sandbox/fixtures.js';
import { applyPage } from '../../../src/sync/apply/apply-page.js';
import { registerLocalPrescriptions } from '../../../src/sync/matching/local-prescriptions.js';
import { loadCheckpoint } from '../../../src/sync/poll/checkpoint.js';
import { purgeDue } from '../../../src/sync/retention/purge-pass.js';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';
import { event, identity, snapshotStore, truncateStore } from '../../support/sync/fixtures.js';
import { DAY, passAt, policy, truncateRetention } from '../../support/sync/retention.js';

// Each class of retention on a real store, with the cleaner's clock injected: rows are written at
// chosen times (a page's receivedAt) or now, and the pass runs at a chosen `now`.

const FEED = 'default';
let tdb: TestDatabase;
let db: Db;
const run = (text: string) => queryRows<Record<string, unknown>>(db, sql.raw(text));

beforeAll(async () => {
  tdb = await createTestDatabase('retention_pass');
  db = tdb.database.db;
});
afterAll(async () => {
  await tdb.drop();
});
beforeEach(async () => {
  await truncateStore(db);
  await truncateRetention(db);
  await registerLocalPrescriptions(db, [
    { external_id: 'rx-done', prescription_identity: identity() },
    { external_id: 'rx-open', prescription_identity: identity({ patient_first_name: 'Bob', erx_message_id: 'ERX-B' }) },
  ]);
});

/** Applies a page as the poller would, stamped as received at `at`. */
async function applyAt(at: number, events: unknown[]) {
  const { version } = await loadCheckpoint(db, FEED);
  return applyPage(db, { feed: FEED, expectedVersion: version, nextIterator: `it-${version + 1}`, events, receivedAt: new Date(at) });
}

const T0 = Date.parse('2025-01-01T00:00:00Z');
const done = (prefix: string) => [
  event(`${prefix}1`, 'accepted', '2024-12-10T10:00:00Z'),
  event(`${prefix}2`, 'ordered', '2024-12-10T10:05:00Z'),
  event(`${prefix}3`, 'delivered', '2024-12-10T10:15:00Z'),
];
const open = (prefix: string) => [
  event(`${prefix}b`, 'accepted', '2024-12-10T10:00:00Z', { patient_first_name: 'Bob', erx_message_id: 'ERX-B' }),
];
const unmatched = (id: string) => event(id, 'accepted', '2024-12-10T10:00:00Z', { patient_first_name: 'Zed' });

const eventRows = () =>
  run(
    'select id, name, subscription_id, api_version, prescription_id is not null as matched, raw is not null as has_raw, payload is not null as has_payload, identity_key is not null as has_key, erx_message_id from intake_sync.events order by id',
  );

describe('RETAIN_EVENT_BODIES', () => {
  test('an event older than it keeps id, name, times, subscription and match, and loses body, payload, identity key and erx id', async () => {
    await applyAt(T0, [...done('old'), ...open('old')]);
    await applyAt(T0 + 20 * DAY, done('new'));
    const result = await passAt(tdb, db, FEED, policy({ event_bodies: 30 * DAY }), T0 + 40 * DAY);
    expect(result).toEqual({ counts: expect.objectContaining({ event_bodies: 4, events: 0 }), complete: true });
    const rows = await eventRows();
    const old = rows.filter((r) => String(r.id).startsWith('old'));
    expect(old).toHaveLength(4);
    for (const row of old) {
      expect(row).toMatchObject({
        has_raw: false,
        has_payload: false,
        has_key: false,
        erx_message_id: null,
        matched: true,
        subscription_id: 'sub-1',
      });
      expect(row.name).toBeTruthy();
    }
    for (const row of rows.filter((r) => String(r.id).startsWith('new'))) expect(row).toMatchObject({ has_raw: true, has_key: true });
  });

  test('an event held by an open finding keeps its body (rematch needs it); once resolved it goes', async () => {
    await applyAt(T0, [unmatched('held')]);
    await passAt(tdb, db, FEED, policy({ event_bodies: DAY }), T0 + 10 * DAY);
    expect((await eventRows())[0]).toMatchObject({ id: 'held', has_raw: true, has_key: true });
    await run(`update intake_sync.quarantine set resolved_at = now() where event_id = 'held'`);
    await passAt(tdb, db, FEED, policy({ event_bodies: DAY }), T0 + 10 * DAY);
    expect((await eventRows())[0]).toMatchObject({ id: 'held', has_raw: false, has_key: false });
  });
});

describe('RETAIN_EVENTS', () => {
  test('rows of finished prescriptions go; those of a prescription still in progress stay (resync needs their subscriptions)', async () => {
    await applyAt(T0, [...done('old'), ...open('old')]);
    await applyAt(T0 + 300 * DAY, done('new'));
    const result = await passAt(tdb, db, FEED, policy({ events: 100 * DAY }), T0 + 366 * DAY);
    expect(result.counts.events).toBe(3);
    expect((await eventRows()).map((r) => r.id)).toEqual(['new1', 'new2', 'new3', 'oldb']);
  });

  test('an unfinished subscriptions migrate keeps the rows of its prescriptions', async () => {
    await applyAt(T0, done('old'));
    await run(
      `insert into intake_sync.subscription_migrations (feed, external_id, target_version, old_subscription_ids) values ('default', 'rx-done', '2025-06-01', '[]')`,
    );
    expect((await passAt(tdb, db, FEED, policy({ events: DAY }), T0 + 10 * DAY)).counts.events).toBe(0);
    await run(`update intake_sync.subscription_migrations set state = 'done'`);
    expect((await passAt(tdb, db, FEED, policy({ events: DAY }), T0 + 10 * DAY)).counts.events).toBe(3);
  });
});

describe('RETAIN_OUTBOX_BODIES', () => {
  test('a delivered or failed row keeps its row and a sha256 of the body; a pending row is untouched', async () => {
    const bodies = [1, 2, 3].map((i) => samplePrescription(i, { prefix: 'ob' }));
    for (const body of bodies)
      await run(`select intake_sync.send_prescription('${JSON.stringify(body).replaceAll("'", "''")}'::jsonb, 'default')`);
    await run(`update intake_sync.outbox set state = 'delivered', completed_at = now(), attempts = 1 where external_id = 'ob-1'`);
    await run(`update intake_sync.outbox set state = 'failed', completed_at = now(), attempts = 3 where external_id = 'ob-2'`);
    const expected = await run(
      `select external_id, encode(sha256(convert_to(body::text, 'UTF8')), 'hex') as digest from intake_sync.outbox where external_id in ('ob-1', 'ob-2') order by external_id`,
    );
    const result = await passAt(tdb, db, FEED, policy({ outbox_bodies: 30 * DAY }), Date.now() + 31 * DAY);
    expect(result.counts.outbox_bodies).toBe(2);
    const rows = await run(
      'select external_id, kind, state, attempts, body is null as purged, body_sha256, completed_at is not null as completed from intake_sync.outbox order by external_id',
    );
    expect(rows).toEqual([
      {
        external_id: 'ob-1',
        kind: 'send',
        state: 'delivered',
        attempts: 1,
        purged: true,
        body_sha256: expected[0]?.digest,
        completed: true,
      },
      { external_id: 'ob-2', kind: 'send', state: 'failed', attempts: 3, purged: true, body_sha256: expected[1]?.digest, completed: true },
      { external_id: 'ob-3', kind: 'send', state: 'pending', attempts: 0, purged: false, body_sha256: null, completed: false },
    ]);
    // the live-send guard still holds after the body is gone
    await expect(
      run(`select intake_sync.send_prescription('${JSON.stringify(bodies[0]).replaceAll("'", "''")}'::jsonb, 'default')`),
    ).rejects.toThrow();
  });
});

describe('RETAIN_QUARANTINE and RETAIN_OPEN_FINDINGS', () => {
  test('a resolved finding is deleted after RETAIN_QUARANTINE; an open one stays', async () => {
    await applyAt(T0, [unmatched('q1'), unmatched('q2')]);
    await run(`update intake_sync.quarantine set resolved_at = '2025-01-02T00:00:00Z' where event_id = 'q1'`);
    const result = await passAt(tdb, db, FEED, policy({ quarantine: 30 * DAY }), T0 + 40 * DAY);
    expect(result.counts.quarantine).toBe(1);
    expect((await run('select event_id from intake_sync.quarantine')).map((r) => r.event_id)).toEqual(['q2']);
  });

  test('an open finding not seen for RETAIN_OPEN_FINDINGS expires: resolved, marked expired, body dropped, audited', async () => {
    await applyAt(T0, [unmatched('q1')]);
    await applyAt(T0 + 80 * DAY, [unmatched('q2')]);
    const result = await passAt(tdb, db, FEED, policy({ open_findings: 90 * DAY }), T0 + 100 * DAY);
    expect(result.counts.open_findings).toBe(1);
    const rows = await run(
      'select event_id, reason, resolved_at is not null as resolved, expired_at is not null as expired, resolution, raw is null as dropped from intake_sync.quarantine order by event_id',
    );
    expect(rows).toEqual([
      { event_id: 'q1', reason: 'unmatched', resolved: true, expired: true, resolution: 'expired', dropped: true },
      { event_id: 'q2', reason: 'unmatched', resolved: false, expired: false, resolution: null, dropped: false },
    ]);
    const audit = await run(`select action, feed, subject, detail from intake_sync.audit_log where action = 'quarantine.expire'`);
    expect(audit).toEqual([
      {
        action: 'quarantine.expire',
        feed: 'default',
        subject: 'q1',
        detail: { reason: 'unmatched', seen_count: 1, retention: 'RETAIN_OPEN_FINDINGS' },
      },
    ]);
  });
});

describe('RETAIN_STATUS_CHANGES', () => {
  test('older changes are deleted; a cursor before them is refused with IS410 "cursor expired", a current one reads on', async () => {
    await applyAt(T0, done('old'));
    const before = await run('select cursor from intake_sync.status_changes_since(null, 100)');
    expect(before).toHaveLength(1);
    const result = await passAt(tdb, db, FEED, policy({ status_changes: 90 * DAY }), Date.now() + 91 * DAY);
    expect(result.counts.status_changes).toBe(1);
    expect(await run('select count(*)::int as n from intake_sync.change_commits')).toEqual([{ n: 0 }]);
    // the follower that had read it: nothing was skipped, it reads on
    await applyAt(T0, open('new'));
    const after = await run(`select external_id, new_status from intake_sync.status_changes_since('${before[0]?.cursor}', 100)`);
    expect(after).toEqual([{ external_id: 'rx-open', new_status: 'accepted' }]);
    // one that had not: refused, never skipped
    const error = await run(`select * from intake_sync.status_changes_since('v1:0:0', 100)`).catch((e: unknown) => e as Error);
    const cause = ((error as { cause?: unknown }).cause ?? error) as { code?: string; message: string };
    expect(cause.code).toBe('IS410');
    expect(cause.message).toMatch(/^cursor expired: /);
    // null: from the oldest change kept
    expect(await run('select external_id from intake_sync.status_changes_since(null, 100)')).toEqual([{ external_id: 'rx-open' }]);
  });
});

describe('RETAIN_AUDIT', () => {
  test("rows older than it are deleted, never one younger than the owner's RETAIN_AUDIT (here one day)", async () => {
    const now = Date.now();
    // as `migrate` records the owner's RETAIN_AUDIT
    await recordOwnerSettings(db, { retainAuditMs: DAY });
    for (const [at, feed] of [
      [now - 3 * 366 * DAY, 'default'],
      [now - 3 * 366 * DAY, null],
      [now - 2 * DAY, 'default'],
      [now - 3_600_000, 'default'],
    ] as const) {
      await run(
        `insert into intake_sync.audit_entries (at, actor, action, feed) values ('${new Date(at).toISOString()}', 'test', 'test.row', ${feed ? `'${feed}'` : 'null'})`,
      );
    }
    const sixYears = await passAt(tdb, db, FEED, policy({ audit: 2 * 366 * DAY }), now, 2 * 366 * DAY);
    expect(sixYears.counts.audit).toBe(2);
    // a caller asking for everything gets what is older than the floor only
    const all = await passAt(tdb, db, FEED, policy({ audit: 1_000 }), now);
    expect(all.counts.audit).toBe(1);
    expect(await run(`select count(*)::int as n from intake_sync.audit_entries where action = 'test.row'`)).toEqual([{ n: 1 }]);
    // each purge that deleted rows audited itself
    expect(await run(`select detail->>'class' as class from intake_sync.audit_entries where action = 'audit.purge'`)).toHaveLength(3);
  });

  test('until migrate recorded one, the floor is 6 years whatever the pass asks', async () => {
    const now = Date.now();
    await run(
      `insert into intake_sync.audit_entries (at, actor, action, feed) values ('${new Date(now - 2 * 366 * DAY).toISOString()}', 'test', 'test.row', 'default')`,
    );
    const all = await passAt(tdb, db, FEED, policy({ audit: 1_000 }), now);
    expect(all.counts.audit).toBe(0);
  });
});

describe('purge --dry-run', () => {
  test('counts per class what a pass would remove, and writes nothing', async () => {
    await applyAt(T0, [...done('old'), ...open('old'), unmatched('q1')]);
    const keep = policy({ event_bodies: DAY, events: DAY, open_findings: DAY, quarantine: DAY, status_changes: DAY });
    const now = Date.now() + 10 * DAY;
    const before = {
      store: await snapshotStore(db),
      audit: await run('select * from intake_sync.audit_entries'),
      other: await run('select * from intake_sync.retention_runs'),
    };
    const due = await purgeDue(db, namesOf(db), { feed: FEED, policy: keep }, now);
    expect(due).toEqual({
      open_findings: 1,
      quarantine: 0,
      event_bodies: 4,
      events: 3,
      outbox_bodies: 0,
      terminal_identities: 0,
      status_changes: 2,
      audit: 0,
    });
    expect({
      store: await snapshotStore(db),
      audit: await run('select * from intake_sync.audit_entries'),
      other: await run('select * from intake_sync.retention_runs'),
    }).toEqual(before);
  });
});

describe('replay after purging', () => {
  test('a replayed event whose body or row was purged is stored again and changes no status', async () => {
    await applyAt(T0, [...done('e'), ...open('e')]);
    const statuses = () => run('select external_id, status, status_event_id from intake_sync.prescriptions order by external_id');
    const settled = await statuses();
    // bodies purged: the replay is a duplicate (same id), nothing is re-applied
    await passAt(tdb, db, FEED, policy({ event_bodies: DAY }), T0 + 10 * DAY);
    const dup = await applyAt(T0 + 11 * DAY, [...done('e'), ...open('e')]);
    expect(dup).toMatchObject({ inserted: 0, duplicates: 4, statusChanges: 0 });
    expect(await statuses()).toEqual(settled);
    // rows purged: the replay is stored again (with its body, for the next purge), statuses stay
    await passAt(tdb, db, FEED, policy({ events: DAY }), T0 + 20 * DAY);
    expect((await eventRows()).map((r) => r.id)).toEqual(['eb']);
    const again = await applyAt(T0 + 21 * DAY, [
      event('e1', 'accepted', '2024-12-10T10:00:00Z'),
      event('e2', 'ordered', '2024-12-10T10:05:00Z'),
    ]);
    expect(again).toMatchObject({ inserted: 2, statusChanges: 0 });
    expect(await statuses()).toEqual(settled);
    expect((await eventRows()).map((r) => [r.id, r.has_raw])).toEqual([
      ['e1', true],
      ['e2', true],
      ['eb', false],
    ]);
  });
});
