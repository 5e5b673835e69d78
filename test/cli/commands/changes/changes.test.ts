import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { formatChangeLine } from '../../../../src/cli/commands/changes/changes.js';
import { sendStatusWakeup } from '../../../../src/db/status-wakeup.js';
import { createTestDatabase, NEEDS_POSTGRES, postgresReachable, type TestDatabase } from '../../../support/db.js';
import { waitFor } from '../../../support/wait-for.js';
import { spawnCli, type WorkerProcess } from '../../../support/process/worker-process.js';

const onPostgres = await postgresReachable();
let tdb: TestDatabase;
const started: WorkerProcess[] = [];

beforeAll(async () => {
  if (!onPostgres) return;
  tdb = await createTestDatabase('sql_api_changes_cli');
  await tdb.database.sql!.unsafe(`insert into intake_sync.prescriptions (external_id, patient_first_name, patient_last_name, patient_state,
      patient_dob, prescriber_npi, written_date, drug_ndc, identity_key)
    select 'rx-' || g, 'Firstname', 'Lastname', 'NY', '1990-01-01', '1234567893', '2024-12-01', '00002015204', 'key-' || g
    from generate_series(1, 5) g`);
});
afterAll(async () => {
  for (const p of started) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
  await tdb?.drop();
});

/** A status change committed as the daemon's page commits one, then the wake-up it sends after the commit. */
const setStatus = async (status: string, ids: string) => {
  await tdb.database.sql!.unsafe(
    `update intake_sync.prescriptions set status = '${status}', status_event_id = 'ev-' || id where id in (${ids})`,
  );
  await sendStatusWakeup(tdb.database.db);
};

/**
 * `changes follow` as its own process. The fallback poll is set to a minute, so a change printed
 * within the test's deadlines was woken by its NOTIFY (or by a reconnect's first read).
 */
function follow(args: string[]): WorkerProcess {
  const p = spawnCli(['changes', 'follow', ...args], { DATABASE_URL: tdb.url!, LOG_LEVEL: 'warn', POLL_INTERVAL_MS: '60000' });
  started.push(p);
  return p;
}

const lines = (p: WorkerProcess) =>
  p
    .stdout()
    .split('\n')
    .filter((line) => line !== '');

describe.skipIf(!onPostgres)(`intake-sync changes follow (${NEEDS_POSTGRES})`, () => {
  test('prints changes as they commit (--json), survives its session being terminated, resumes from --since, ends cleanly on a signal', async () => {
    await setStatus('accepted', '1, 2, 3');
    const json = follow(['--json']);
    await waitFor(() => lines(json).length >= 3, { timeoutMs: 60_000, what: 'the first three changes' });
    await setStatus('ordered', '1');
    await waitFor(() => lines(json).length >= 4, { timeoutMs: 30_000, what: 'a change woken by its notification' });

    const [terminated] = await tdb.database.sql!<{ n: number }[]>`select count(pg_terminate_backend(pid))::int as n from pg_stat_activity
      where application_name = 'intake-sync changes follow' and datname = current_database()`;
    expect(terminated?.n).toBe(1);
    await setStatus('dispensed', '2');
    await waitFor(() => lines(json).length >= 5, { timeoutMs: 30_000, what: 'a change after the reconnect' });

    json.child.kill('SIGTERM');
    await expect(json.exited).resolves.toBe(0);
    const changes = lines(json).map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(changes.map((c) => [c.external_id, c.previous_status, c.new_status, c.event_id])).toEqual([
      ['rx-1', null, 'accepted', 'ev-1'],
      ['rx-2', null, 'accepted', 'ev-2'],
      ['rx-3', null, 'accepted', 'ev-3'],
      ['rx-1', 'accepted', 'ordered', 'ev-1'],
      ['rx-2', 'accepted', 'dispensed', 'ev-2'],
    ]);
    expect(Object.keys(changes[0]!)).toEqual([
      'cursor',
      'external_id',
      'previous_status',
      'new_status',
      'event_id',
      'occurred_at',
      'changed_at',
      'feed',
      'trace_id',
    ]);
    expect(json.stdout()).not.toMatch(/Firstname|Lastname|1990-01-01/);

    // resume after the third change, in readable form
    const text = follow(['--since', String(changes[2]!.cursor)]);
    await waitFor(() => lines(text).length >= 2, { timeoutMs: 60_000, what: 'the changes after the cursor' });
    await setStatus('delivered', '3');
    await waitFor(() => lines(text).length >= 3, { timeoutMs: 30_000, what: 'a new change' });
    text.child.kill('SIGINT');
    await expect(text.exited).resolves.toBe(0);
    const printed = lines(text);
    expect(printed.slice(0, 2)).toEqual([formatChangeLine(changes[3] as never), formatChangeLine(changes[4] as never)]);
    expect(printed[2]).toMatch(/ rx-3 {2}accepted -> delivered {2}event ev-3 {2}cursor v2:default\.\d+\.\d+$/);
    expect(printed).toHaveLength(3);
  }, 240_000);

  test('a malformed --since is refused with the argument named (bad input: exit 2)', async () => {
    const bad = follow(['--since', 'not-a-cursor']);
    await expect(bad.exited).resolves.toBe(2);
    expect(
      bad
        .logs()
        .map((l) => l.raw ?? '')
        .join('\n'),
    ).toMatch(/--since: not a cursor this feed returned \(status_changes_since: cursor is malformed .*\(22023\)\)/);
  }, 60_000);
});
