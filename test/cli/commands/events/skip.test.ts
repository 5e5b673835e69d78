import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { queryRows } from '../../../../src/db/connection.js';
import { loadCheckpoint, resetCheckpoint } from '../../../../src/sync/poll/checkpoint.js';
import { createTestDatabase, postgresReachable, type TestDatabase } from '../../../support/db.js';
import { startHostileFeedServer, type HostileFeedServer } from '../../../support/hostile-feed-server.js';
import { runCli } from '../../../support/cli/run-cli.js';

const available = await postgresReachable();
const CAP = 65_536;
const small = (id: string) => JSON.stringify({ id, name: 'accepted', payload: {} });

describe.skipIf(!available)('events skip: exactly one event too large to read, audited', () => {
  let tdb: TestDatabase;
  let server: HostileFeedServer;
  let env: Record<string, string>;

  beforeAll(async () => {
    tdb = await createTestDatabase('cli_events_skip');
    // the big event nests deep too: nothing on the way may parse it
    const big = `{"id":"ev-big","name":"accepted","payload":{"blob":"${'x'.repeat(200_000)}","deep":${'['.repeat(50_000)}${']'.repeat(50_000)}}}`;
    server = await startHostileFeedServer([small('e0'), big, small('e2')], { contentLength: false });
    env = {
      INTAKE_API_BASE_URL: server.baseUrl,
      INTAKE_API_KEY: 'k',
      INTAKE_API_SECRET: 's',
      DATABASE_URL: tdb.url as string,
      MAX_RESPONSE_BYTES: String(CAP),
    };
    await resetCheckpoint(tdb.database.db, 'default', { to: '1', by: 'test' });
  });
  afterAll(async () => {
    await server?.close();
    await tdb?.drop();
  });

  test('refuses a position the feed is not at, and an event that fits (exit 2, nothing written)', async () => {
    const elsewhere = await runCli(['events', 'skip', '--at', '2'], env);
    expect(elsewhere.code).toBe(2);
    expect(elsewhere.stderr).toMatch(/checkpoint of feed default is at 1, not at 2: nothing skipped/);
    const neither = await runCli(['events', 'skip'], env);
    expect(neither.code).toBe(2);
    expect(neither.stderr).toMatch(/give --at ITERATOR/);
    expect((await loadCheckpoint(tdb.database.db, 'default')).iterator).toBe('1');
  });

  test('--dry-run reads what follows the event (streamed, never held) and writes nothing', async () => {
    const result = await runCli(['events', 'skip', '--at', '1', '--dry-run', '--json'], env);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({
      feed: 'default',
      at: '1',
      next: '2',
      key: 'ev-big',
      event_id: 'ev-big',
      dry_run: true,
    });
    expect(JSON.parse(result.stdout).bytes).toBeGreaterThan(CAP);
    expect((await loadCheckpoint(tdb.database.db, 'default')).iterator).toBe('1');
    expect(server.limits.at(-1)).toBe(1);
  });

  test('skips exactly that event: checkpoint moved one event, quarantined by fingerprint, audited', async () => {
    const before = await loadCheckpoint(tdb.database.db, 'default');
    const result = await runCli(['events', 'skip', '--at', '1', '--json'], env);
    expect(result.code, result.stderr).toBe(0);
    const after = await loadCheckpoint(tdb.database.db, 'default');
    expect(after).toMatchObject({ iterator: '2', version: before.version + 1, eventsQuarantined: before.eventsQuarantined + 1 });
    const [row] = await queryRows<{ reason: string; event_id: string; raw: Record<string, unknown>; detail: string }>(
      tdb.database.db,
      sql`select reason, event_id, raw, detail from intake_sync.quarantine where quarantine_key = 'ev-big'`,
    );
    expect(row).toMatchObject({ reason: 'malformed', event_id: 'ev-big', raw: { sha256: expect.stringMatching(/^[0-9a-f]{64}$/) } });
    expect(row?.detail).toMatch(/larger than MAX_RESPONSE_BYTES \(65536\)/);
    const audit = await queryRows<{ action: string; subject: string; detail: Record<string, unknown> }>(
      tdb.database.db,
      sql`select action, subject, detail from intake_sync.audit_entries where action = 'event.skip'`,
    );
    expect(audit).toEqual([
      { action: 'event.skip', subject: 'ev-big', detail: expect.objectContaining({ at: '1', next: '2', event_id: 'ev-big' }) },
    ]);
    // the next event fits: there is nothing more to skip
    const again = await runCli(['events', 'skip', '--at', '2'], env);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/fits MAX_RESPONSE_BYTES/);
  });
});
