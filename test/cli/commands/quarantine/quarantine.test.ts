import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryRows } from '../../../../src/db/connection.js';
import { applyPage } from '../../../../src/sync/apply/apply-page.js';
import { registerLocalPrescriptions } from '../../../../src/sync/matching/local-prescriptions.js';
import { loadCheckpoint } from '../../../../src/sync/poll/checkpoint.js';
import { sql } from 'drizzle-orm';
import { createTestDatabase, NEEDS_POSTGRES, postgresReachable, type TestDatabase } from '../../../support/db.js';
import { event, identity } from '../../../support/sync/fixtures.js';
import { runCli } from '../../../support/cli/run-cli.js';

const hasPostgres = await postgresReachable();

// Triage and rematch as support staff run them: the CLI as its own process on a database the worker's
// page apply filled. Each case spawns a few CLI processes (tsx start-up ~1-2 s each under load).
describe.skipIf(!hasPostgres)(`quarantine triage, rematch and import on the CLI (${NEEDS_POSTGRES})`, { timeout: 120_000 }, () => {
  let tdb: TestDatabase;
  let dir: string;
  let env: Record<string, string>;

  const query = <T extends Record<string, unknown>>(text: string) => queryRows<T>(tdb.database.db, sql.raw(text));
  const audit = (action: string) =>
    query<{ subject: string | null; detail: Record<string, unknown>; actor: string }>(
      `select subject, detail, actor from intake_sync.audit_log where action = '${action}' order by id`,
    );

  async function applyEvents(events: unknown[]) {
    const { db } = tdb.database;
    const { version } = await loadCheckpoint(db, 'default');
    return applyPage(db, { feed: 'default', expectedVersion: version, nextIterator: `after-v${version}`, events });
  }

  beforeAll(async () => {
    tdb = await createTestDatabase('cli_quarantine');
    dir = await mkdtemp(join(tmpdir(), 'intake-triage-'));
    env = { DATABASE_URL: tdb.url ?? '', DATA_DIR: dir };
    await registerLocalPrescriptions(tdb.database.db, [{ external_id: 'rx-ada', prescription_identity: identity() }]);
    await applyEvents([
      { ...event('e1', 'accepted', '2024-12-10T10:00:00Z', { patient_last_name: 'Lovelase' }), subscription_id: 'sub-x' },
      { ...event('e2', 'dispensed', '2024-12-10T12:00:00Z', { patient_last_name: 'Lovelase' }), subscription_id: 'sub-x' },
      { ...event('e3', 'accepted', '2024-12-10T10:00:00Z', { patient_last_name: 'Nobody' }), subscription_id: 'sub-y' },
      { ...event('e4', 'ordered', '2024-12-10T10:00:00Z', { patient_last_name: 'Later' }), subscription_id: 'sub-z' },
    ]);
  });
  afterAll(async () => {
    await tdb?.drop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('list shows the event name and no identity; show prints one identity and audits the read', async () => {
    const listed = await runCli(['quarantine', 'list'], env);
    expect(listed).toMatchObject({ code: 0, stderr: '' });
    expect(listed.stdout).toMatch(/^event_id\s+subscription_id\s+event_name\s+reason/m);
    expect(listed.stdout).toMatch(/^e2\s+sub-x\s+dispensed\s+unmatched/m);
    expect(listed.stdout).not.toMatch(/Lovelase/);

    const shown = await runCli(['quarantine', 'show', 'e1'], env);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(/^identity\.patient_last_name\s+Lovelase$/m);
    expect(shown.stdout).toMatch(/^subscription_id\s+sub-x$/m);
    const [read] = await audit('quarantine.show');
    expect(read).toMatchObject({ subject: 'e1', detail: {} });
    // the database role, then the OS user@host the CLI attributed the read to
    expect(read?.actor).toMatch(/^\S+ \(\S+@\S+\)$/);
    // the reveal request was committed first, by the same login and attribution (0017: the durable record)
    const [requested] = await audit('quarantine.reveal_requested');
    expect(requested).toMatchObject({ subject: 'e1', actor: read?.actor });

    const unknown = await runCli(['quarantine', 'show', 'nope'], env);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/event_id: no quarantine finding with this id in feed default/);
  });

  it('resolve applies the subscription’s held events; refusals exit 2 naming the argument', async () => {
    const refused = await runCli(['quarantine', 'resolve', 'e1', 'rx-nope'], env);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/external_id: no local prescription with this external_id in feed default/);

    const resolved = await runCli(['quarantine', 'resolve', 'e1', 'rx-ada', '--json'], env);
    expect(resolved).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(resolved.stdout)).toEqual({
      event_id: 'e1',
      external_id: 'rx-ada',
      subscription_id: 'sub-x',
      events_applied: 2,
      status: 'dispensed',
    });
    expect((await audit('quarantine.resolve')).map((a) => a.subject)).toEqual(['e1']);

    const again = await runCli(['quarantine', 'resolve', 'e2', 'rx-ada'], env);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/event_id: the finding is already closed \(resolved\)/);
  });

  it('dismiss needs a reason code and closes the finding', async () => {
    expect((await runCli(['quarantine', 'dismiss', 'e3'], env)).code).toBe(2);
    const prose = await runCli(['quarantine', 'dismiss', 'e3', '--reason', 'Ada says no'], env);
    expect(prose.code).toBe(2);
    expect(prose.stderr).toMatch(/reason: must be a code/);
    const dismissed = await runCli(['quarantine', 'dismiss', 'e3', '--reason', 'not_ours'], env);
    expect(dismissed).toMatchObject({
      code: 0,
      stdout: 'dismissed e3 (not_ours): the whole subscription, which had no other open finding\n',
    });
    const all = await runCli(['quarantine', 'list', '--all', '--json'], env);
    const rows = all.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { event_id: string; resolution: string | null });
    expect(rows.map((r) => [r.event_id, r.resolution])).toEqual([
      ['e1', 'resolved'],
      ['e2', 'resolved'],
      ['e3', 'dismissed'],
      ['e4', null],
    ]);
  });

  it('dismiss closes the open findings of the subscription (issue 27 §6), or with --only-this-event that one alone', async () => {
    await applyEvents(
      ['w1', 'w2', 'w3'].map((id) => ({
        ...event(id, 'accepted', '2024-12-10T10:00:00Z', { patient_last_name: 'Nobody' }),
        subscription_id: 'sub-w',
      })),
    );
    const listed = await runCli(['quarantine', 'list'], env);
    expect(listed.stdout).toMatch(/^w3\s+sub-w\s+accepted\s+unmatched/m);
    const one = await runCli(['quarantine', 'dismiss', 'w1', '--reason', 'not_ours', '--only-this-event'], env);
    expect(one).toMatchObject({ code: 0, stdout: 'dismissed w1 (not_ours): this finding only\n' });
    const rest = await runCli(['quarantine', 'dismiss', 'w2', '--reason', 'not_ours'], env);
    expect(rest).toMatchObject({
      code: 0,
      stdout: 'dismissed w2 and 1 other open finding of its subscription (not_ours): the whole subscription, 2 in all\n',
    });
    expect((await audit('quarantine.dismiss')).map((a) => a.subject).filter((s) => s?.startsWith('w'))).toEqual(['w1', 'w2', 'w3']);
    const again = await runCli(['quarantine', 'dismiss', 'w3', '--reason', 'not_ours', '--json'], env);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/event_id: the finding is already closed \(dismissed\)/);
  });

  it('import: a bad line imports nothing (exit 2); --dry-run writes nothing; --skip-bad-lines names each skipped line', async () => {
    const good = { external_id: 'rx-later', prescription_identity: identity({ patient_last_name: 'Later' }) };
    const file = join(dir, 'rx.ndjson');
    await writeFile(file, `${JSON.stringify(good)}\n{"external_id": "rx-bad"}\nnot json\n`);
    const count = async () => Number((await query<{ n: number }>(`select count(*)::int as n from intake_sync.prescriptions`))[0]?.n);
    const before = await count();

    const strict = await runCli(['prescriptions', 'import', file], env);
    expect(strict.code).toBe(2);
    expect(strict.stderr).toMatch(/rx\.ndjson:2: bad: .*prescription_identity/);
    expect(strict.stderr).toMatch(/rx\.ndjson:3: bad: not valid JSON/);
    expect(strict.stderr).toMatch(/2 bad line\(s\), nothing imported; .*--skip-bad-lines to import the 1 good one/);
    expect(await count()).toBe(before);

    const dry = await runCli(['prescriptions', 'import', file, '--skip-bad-lines', '--dry-run', '--json'], env);
    expect(dry.code).toBe(0);
    const lines = dry.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.at(-1)).toMatchObject({ dry_run: true, new: 1, updated: 0, heldConcerned: 1, skipped: 2 });
    expect(await count()).toBe(before);

    const skipping = await runCli(['prescriptions', 'import', file, '--skip-bad-lines'], env);
    expect(skipping.code).toBe(0);
    expect(skipping.stderr).toMatch(/rx\.ndjson:2: skipped: /);
    expect(skipping.stderr).toMatch(/rx\.ndjson:3: skipped: not valid JSON/);
    expect(skipping.stdout).toBe('imported 1 new, 0 updated, skipped 2 bad line(s), matched 1 held event(s)\n');
    expect(await count()).toBe(before + 1);
    expect(await audit('prescription.import')).toMatchObject([
      { subject: 'rx-later', detail: { inserted: 1, updated: 0, rows: 1, rematched: 1 } },
    ]);
  });

  it('rematch --dry-run lists what would match and writes nothing; rematch matches in batches and audits the run', async () => {
    await applyEvents([{ ...event('e5', 'accepted', '2024-12-10T10:00:00Z', { patient_last_name: 'Fax' }), subscription_id: 'sub-f' }]);
    // registered behind the rematch's back (as a restore or a hand-made row would): only a rematch finds it
    await query(`insert into intake_sync.prescriptions (feed, external_id, patient_first_name, patient_last_name, patient_state,
      patient_dob, prescriber_npi, written_date, drug_ndc, identity_key)
      select feed, 'rx-fax', 'x', 'x', 'x', 'x', 'x', 'x', 'x', identity_key from intake_sync.events where id = 'e5'`);

    const dry = await runCli(['rematch', '--dry-run'], env);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toMatch(/^would match e5 -> rx-fax$/m);
    expect(dry.stdout).toMatch(/^dry run: nothing was written$/m);
    expect(dry.stdout).toMatch(/^matched\s+1$/m);
    expect(await query(`select prescription_id from intake_sync.events where id = 'e5'`)).toEqual([{ prescription_id: null }]);
    expect(await audit('rematch.run')).toEqual([]);

    const run = await runCli(['rematch', '--json'], env);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ examined: 1, matched: 1, stillUnmatched: 0, stillAmbiguous: 0, batches: 1 });
    expect((await audit('rematch.run')).map((a) => a.detail)).toEqual([
      { examined: 1, matched: 1, still_unmatched: 0, still_ambiguous: 0, batches: 1 },
    ]);
  });
});
