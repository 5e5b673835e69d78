import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Db } from '../../../../src/db/connection.js';
import { applyPage } from '../../../../src/sync/apply/apply-page.js';
import { registerLocalPrescriptions } from '../../../../src/sync/matching/local-prescriptions.js';
import { loadCheckpoint } from '../../../../src/sync/poll/checkpoint.js';
import { createTestDatabase, NEEDS_POSTGRES, postgresReachable, type TestDatabase } from '../../../support/db.js';
import { event, identity } from '../../../support/sync/fixtures.js';
import { runCli } from '../../../support/cli/run-cli.js';

// `intake-sync purge` and `changes follow` past retention, as processes against the real server.

const onPostgres = await postgresReachable();
let tdb: TestDatabase;
let db: Db;
const q = <T extends Record<string, unknown>>(text: string) => tdb.database.sql!.unsafe(text) as unknown as Promise<T[]>;

beforeAll(async () => {
  if (!onPostgres) return;
  tdb = await createTestDatabase('retention_cli');
  db = tdb.database.db;
  await registerLocalPrescriptions(db, [{ external_id: 'rx-1', prescription_identity: identity() }]);
  await applyPage(db, {
    feed: 'default',
    expectedVersion: (await loadCheckpoint(db, 'default')).version,
    nextIterator: 'it-1',
    events: [event('e1', 'accepted', '2024-12-10T10:00:00Z'), event('e2', 'delivered', '2024-12-10T10:20:00Z')],
    receivedAt: new Date('2025-01-01T00:00:00Z'),
  });
  // the change was committed long ago (the CLI's clock is the real one)
  await q(`update intake_sync.change_commits set committed_at = '2025-01-01T00:00:00Z'`);
  // retention reads the feed's own commit times (0027, per feed clocks)
  await q(`update intake_sync.change_commit_feeds set committed_at = '2025-01-01T00:00:00Z'`);
});
afterAll(async () => {
  await tdb?.drop();
});

const env = () => ({ DATABASE_URL: tdb.url!, RETAIN_EVENT_BODIES: '30d', RETAIN_EVENTS: 'forever', RETAIN_STATUS_CHANGES: '30d' });
const bodies = async () => (await q<{ n: number }>('select count(*)::int as n from intake_sync.events where raw is not null'))[0]?.n;

describe.skipIf(!onPostgres)(`intake-sync purge (${NEEDS_POSTGRES})`, () => {
  test('--dry-run --json prints what each class would lose and writes nothing', async () => {
    const audit = await q('select * from intake_sync.audit_entries');
    const result = await runCli(['purge', '--dry-run', '--json'], env());
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      feed: 'default',
      dry_run: true,
      counts: {
        open_findings: 0,
        quarantine: 0,
        event_bodies: 2,
        events: 0,
        outbox_bodies: 0,
        terminal_identities: 0,
        status_changes: 1,
        audit: 0,
      },
    });
    expect(await bodies()).toBe(2);
    expect(await q('select * from intake_sync.audit_entries')).toEqual(audit);
    expect(await q('select * from intake_sync.retention_runs')).toEqual([]);
  }, 60_000);

  test('an unknown --feed or a malformed RETAIN_* is refused with exit 2, naming it, and writes nothing', async () => {
    const unknown = await runCli(['purge', '--feed', 'nope'], env());
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/--feed: "nope" is not a configured feed/);
    const bad = await runCli(['purge'], { ...env(), RETAIN_EVENT_BODIES: '30 days' });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/RETAIN_EVENT_BODIES: must be a duration/);
    expect(await bodies()).toBe(2);
  }, 60_000);

  test('a follower whose cursor is past what retention deleted: `changes follow` exits 1 saying the cursor expired', async () => {
    const [first] = await q<{ cursor: string }>('select cursor from intake_sync.status_changes_since(null, 1)');
    const result = await runCli(['purge'], env());
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/event_bodies +RETAIN_EVENT_BODIES +30d +2/);
    expect(await bodies()).toBe(0);
    const [audit] = await q<{ action: string; detail: Record<string, number>; actor: string }>(
      `select action, detail, actor from intake_sync.audit_log where action = 'purge.run'`,
    );
    expect(audit).toMatchObject({ action: 'purge.run', detail: { event_bodies: 2, status_changes: 1 } });
    expect(audit?.actor).toMatch(/^postgres \(.+@.+\)$/);

    // an older cursor than the newest deleted change
    const expired = await runCli(['changes', 'follow', '--since', 'v1:0:0'], { DATABASE_URL: tdb.url! });
    expect(expired.code).toBe(1);
    expect(expired.stderr).toMatch(/changes follow: cursor expired: .*RETAIN_STATUS_CHANGES/);
    expect(first?.cursor).toMatch(/^v2:/);
  }, 60_000);
});
