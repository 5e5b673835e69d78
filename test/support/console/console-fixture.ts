import { randomBytes } from 'node:crypto';
import { tagForRun } from '../test-run.js';
import { existsSync } from 'node:fs';
import postgres from 'postgres';
import { grantsScript } from '../../../src/db/grants-script.js';
import { type ConsoleSettings, composeConsole } from '../../../src/console/compose.js';
import type { ConsoleDeps } from '../../../src/console/context.js';
import { type RunningConsole, startConsole } from '../../../src/console/server.js';
import { registerFeeds } from '../../../src/db/feed-registry.js';
import { createLogger } from '../../../src/log/log.js';
import { applyPage } from '../../../src/sync/apply/apply-page.js';
import { writeFeedDeadlines } from '../../../src/store-api/overdue/feed-deadlines.js';
import { DEFAULT_STAGE_DEADLINES } from '../../../src/config/overdue-deadlines.js';
import { registerLocalPrescriptions } from '../../../src/sync/matching/local-prescriptions.js';
import { loadCheckpoint } from '../../../src/sync/poll/checkpoint.js';
import { ADMIN_URL, createTestDatabase, type TestDatabase } from '../db.js';
import { event, identity } from '../sync/fixtures.js';
import { cursorProblemCommand, describeCursorProblem } from '../../../src/sync/state/cursor-problem.js';
import { roleTagStatement } from '../test-run.js';

/** The Debian chromium the console's browser tests drive (.ci/run installs it). */
export const CHROMIUM = '/usr/bin/chromium';
export const chromiumMissing = !existsSync(CHROMIUM);
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** The patient data of the held events: none of it may appear on a page before Reveal identity. */
export const PATIENT = { first: 'Zenobia', last: 'Quillfeather', dob: '1971-03-04' } as const;
export const PATIENT_B = { first: 'Bartholomew', last: 'Inkwright', dob: '1966-07-21' } as const;

export const FEED_A = 'clinic_a';
export const FEED_B = 'clinic_b';

/** A console over a real database with two feeds, two app roles and held events in each feed. */
export interface ConsoleWorld {
  tdb: TestDatabase;
  owner: postgres.Sql;
  roles: { a: string; b: string };
  password: string;
  console: RunningConsole;
  deps: ConsoleDeps;
  /** moves the console's clock (idle logoff) */
  advance(ms: number): void;
  /** whether request_reveal is the test's stand-in (iso-c's function not merged yet) */
  revealStub: boolean;
  close(): Promise<void>;
}

async function applyEvents(tdb: TestDatabase, feed: string, events: unknown[]) {
  const { db } = tdb.database;
  const { version } = await loadCheckpoint(db, feed);
  await applyPage(db, { feed, expectedVersion: version, nextIterator: `after-v${version}`, events });
}

/**
 * TEST-ONLY stand-in for request_reveal(feed, event_id) (engineer iso-c's audited reveal, branch iso-c,
 * drizzle/0018_terminal_identities.sql: same audit action, quarantine.reveal_requested), created
 * only when the schema has none: it records the reveal as an audit row of the calling role, which
 * is what the console relies on (docs/console.md). Never part of a migration.
 */
async function ensureRevealFunction(owner: postgres.Sql, roles: string[]): Promise<boolean> {
  const [row] = await owner`select to_regprocedure('intake_sync.request_reveal(text, text)') is not null as present`;
  if (row?.present) return false;
  await owner.unsafe(`create function intake_sync.request_reveal(feed text, event_id text) returns void
    language plpgsql security definer set search_path = pg_catalog, pg_temp as $$
    begin
      perform intake_sync._require_feed(request_reveal.feed);
      perform intake_sync._audit('quarantine.reveal_requested', request_reveal.feed, request_reveal.event_id, '{"test_stub": true}'::jsonb);
    end $$`);
  for (const role of roles) await owner.unsafe(`grant execute on function intake_sync.request_reveal(text, text) to "${role}"`);
  return true;
}

/** Builds the world: feeds clinic_a and clinic_b, a role for each, findings in each, the console on a free port. */
export async function createConsoleWorld(label: string, settings: Partial<ConsoleSettings> = {}): Promise<ConsoleWorld> {
  const tdb = await createTestDatabase(label);
  if (!tdb.url) throw new Error('the console tests need a real PostgreSQL');
  await registerFeeds(tdb.database.db, [FEED_A, FEED_B], null);
  const owner = postgres(tdb.url, { max: 1, onnotice: () => {} });
  const suffix = randomBytes(3).toString('hex');
  const roles = { a: `console_a_${suffix}`, b: `console_b_${suffix}` };
  const password = `pw-${randomBytes(8).toString('hex')}`;
  for (const [role, feed] of [
    [roles.a, FEED_A],
    [roles.b, FEED_B],
  ] as const) {
    await owner.unsafe(`create role "${role}" login password '${password}'`);
    await owner.unsafe(roleTagStatement(role));
    const tag = tagForRun('role', role);
    if (tag) await owner.unsafe(tag);
    await owner.unsafe(grantsScript('app', 'intake_sync', role, { kind: 'feeds', feeds: [feed] }).join('\n'));
  }
  const revealStub = await ensureRevealFunction(owner, [roles.a, roles.b]);

  // clinic_a: two held events of sub-a1 and one of sub-a2 for a patient no prescription names; a
  // prescription to resolve to; clinic_b: one held event of its own patient
  const local = identity({ patient_first_name: 'Local', patient_last_name: 'Person' });
  await registerLocalPrescriptions(tdb.database.db, [{ external_id: 'rx-a-100', prescription_identity: local }], { feed: FEED_A });
  const held = { patient_first_name: PATIENT.first, patient_last_name: PATIENT.last, patient_dob: PATIENT.dob };
  await applyEvents(tdb, FEED_A, [
    { ...event('evt-a1', 'accepted', '2024-12-10T10:00:00Z', held), subscription_id: 'sub-a1' },
    { ...event('evt-a2', 'dispensed', '2024-12-10T12:00:00Z', held), subscription_id: 'sub-a1' },
    { ...event('evt-a3', 'accepted', '2024-12-10T13:00:00Z', held), subscription_id: 'sub-a2' },
    { ...event('evt-a4', 'accepted', '2024-12-10T14:00:00Z', held), subscription_id: 'sub-a3' },
    { ...event('evt-a5', 'shipped', '2024-12-10T15:00:00Z', held), subscription_id: 'sub-a4' },
  ]);
  const heldB = { patient_first_name: PATIENT_B.first, patient_last_name: PATIENT_B.last, patient_dob: PATIENT_B.dob };
  await applyEvents(tdb, FEED_B, [{ ...event('evt-b1', 'accepted', '2024-12-10T10:00:00Z', heldB), subscription_id: 'sub-b1' }]);

  // a send each clinic delivered 5 h ago with no event since: overdue at `sent` (default deadline 2 h)
  await writeFeedDeadlines(tdb.database.db, [
    { feed: FEED_A, deadlines: DEFAULT_STAGE_DEADLINES },
    { feed: FEED_B, deadlines: DEFAULT_STAGE_DEADLINES },
  ]);
  for (const [feed, externalId] of [
    [FEED_A, 'rx-a-late'],
    [FEED_B, 'rx-b-late'],
  ] as const) {
    await owner`insert into intake_sync.outbox (feed, external_id, kind, state, completed_at)
      values (${feed}, ${externalId}, 'send', 'delivered', now() - interval '5 hours')`;
  }

  // clinic_a is led by a worker (a live lease held by a live backend: this connection's, as the daemon's
  // lock session holds it); clinic_b's last lease lapsed an hour ago
  await owner`insert into intake_sync.feed_leases (feed, holder, holder_pid, acquired_at, heartbeat_at, expires_at) values
    (${FEED_A}, 'holder-a', pg_backend_pid(), now() - interval '2 hours', now() - interval '1 second', now() + interval '1 hour'),
    (${FEED_B}, 'holder-b', 2, now() - interval '3 hours', now() - interval '61 minutes', now() - interval '1 hour')`;
  // clinic_b's worker had stopped it on an expired position (feed_stops, as attachFeedStopRecord writes it)
  await owner`insert into intake_sync.feed_stops (feed, stopped_at, reason, command) values
    (${FEED_B}, now() - interval '70 minutes', ${describeCursorProblem(FEED_B, 'expired')}, ${cursorProblemCommand(FEED_B, 'expired')})`;

  let offset = 0;
  const deps = composeConsole(
    // the test server trusts 127.0.0.1 (no password asked): the fixture skips requirePasswordAuth, as
    // CONSOLE_ALLOW_TRUST_AUTH=local-development would; many sessions per role, as the pages' tests sign in often
    {
      databaseUrl: tdb.url,
      schema: 'intake_sync',
      host: '127.0.0.1',
      idleTimeoutMs: 15 * 60_000,
      maxConnections: 40,
      sessionsPerRole: 20,
      ...settings,
    },
    createLogger({ level: 'silent' }),
    () => Date.now() + offset,
  );
  const running = await startConsole(deps, '127.0.0.1', 0);
  return {
    tdb,
    owner,
    roles,
    password,
    console: running,
    deps,
    revealStub,
    advance(ms) {
      offset += ms;
    },
    async close() {
      await running.close();
      await owner.end({ timeout: 1 });
      await tdb.drop();
      const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
      for (const role of [roles.a, roles.b]) await admin.unsafe(`drop role if exists "${role}"`).catch(() => {});
      await admin.end({ timeout: 1 });
    },
  };
}
