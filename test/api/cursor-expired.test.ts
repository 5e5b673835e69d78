import { afterAll, beforeAll, expect, test } from 'vitest';
import { followStatusChanges } from '../../src/api/change-follower.js';
import { CursorExpiredError } from '../../src/api/errors/cursor-expired-error.js';
import { intakeSyncApi } from '../../src/api/intake-sync-api.js';
import type { StatusChange } from '../../src/api/status-change.js';
import { createTestDatabase, NEEDS_POSTGRES, postgresReachable, type TestDatabase } from '../support/db.js';
import { passAt, policy } from '../support/sync/retention.js';

// The Node API past retention: a cursor older than what RETAIN_STATUS_CHANGES kept ends the
// follower with CursorExpiredError (never a silent skip); a follower that keeps up never sees it.

const onPostgres = await postgresReachable();
let tdb: TestDatabase;

beforeAll(async () => {
  if (!onPostgres) return;
  tdb = await createTestDatabase('api_cursor_expired');
  await tdb.database.sql!.unsafe(`insert into intake_sync.prescriptions (external_id, patient_first_name, patient_last_name, patient_state,
      patient_dob, prescriber_npi, written_date, drug_ndc, identity_key)
    select 'rx-' || g, 'Firstname', 'Lastname', 'NY', '1990-01-01', '1234567893', '2024-12-01', '00002015204', 'key-' || g
    from generate_series(1, 3) g`);
});
afterAll(async () => {
  await tdb?.drop();
});

const setStatus = (status: string, id: number) =>
  tdb.database.sql!.unsafe(`update intake_sync.prescriptions set status = '${status}', status_event_id = 'ev-${id}' where id = ${id}`);
const purgeChanges = () => passAt(tdb, tdb.database.db, 'default', policy({ status_changes: 1_000 }), Date.now() + 60_000);

test.skipIf(!onPostgres)(
  `a follower that keeps up reads on across purges; an expired cursor throws CursorExpiredError (${NEEDS_POSTGRES})`,
  async () => {
    await setStatus('accepted', 1);
    const stop = new AbortController();
    const follower = followStatusChanges({ url: tdb.url!, since: null, signal: stop.signal, pollIntervalMs: 50 });
    const seen: StatusChange[] = [];
    const first = await follower.next();
    seen.push(first.value as StatusChange);
    // everything up to here is deleted while the follower is at the head
    expect((await purgeChanges()).counts.status_changes).toBe(1);
    await setStatus('accepted', 2);
    const second = await follower.next();
    seen.push(second.value as StatusChange);
    expect(seen.map((c) => c.external_id)).toEqual(['rx-1', 'rx-2']);
    stop.abort();
    await follower.return(undefined);

    // a consumer that stored the first cursor and comes back after the second purge
    await purgeChanges();
    const late = followStatusChanges({ url: tdb.url!, since: seen[0]!.cursor, pollIntervalMs: 50 });
    const error = await late.next().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CursorExpiredError);
    expect(error).toMatchObject({ name: 'CursorExpiredError', code: 'IS410', cursor: seen[0]!.cursor });
    expect((error as Error).message).toMatch(/^cursor expired: /);

    // the one-shot read says the same
    const api = intakeSyncApi(tdb.database.sql!);
    await expect(api.changesSince(seen[0]!.cursor, 10)).rejects.toBeInstanceOf(CursorExpiredError);
    await expect(api.changesSince(seen[1]!.cursor, 10)).resolves.toEqual([]);
  },
  60_000,
);
