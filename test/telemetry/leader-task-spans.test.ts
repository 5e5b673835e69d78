import { sql } from 'drizzle-orm';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { openDatabase, type Database, type Db } from '../../src/db/connection.js';
import { createLogger } from '../../src/log/log.js';
import { applyPage } from '../../src/sync/apply/apply-page.js';
import { rematch } from '../../src/operations/matching/rematch-held.js';
import { loadCheckpoint } from '../../src/sync/poll/checkpoint.js';
import { RetentionCleaner } from '../../src/sync/retention/cleaner.js';
import { StatisticsKeeper } from '../../src/sync/statistics/statistics-keeper.js';
import { ALLOWED_ATTRIBUTE_KEYS } from '../../src/telemetry/attributes.js';
import type { Telemetry } from '../../src/telemetry/start.js';
import { createTestDatabase, NEEDS_POSTGRES, postgresReachable, urlAs, type TestDatabase } from '../support/db.js';
import { event } from '../support/sync/fixtures.js';
import { DAY, policy } from '../support/sync/retention.js';
import type { DecodedSpan } from '../support/telemetry/otlp-protobuf.js';
import type { OtlpReceiver } from '../support/telemetry/otlp-receiver.js';
import { tracingTo } from '../support/telemetry/traced-world.js';
import { roleTagStatement } from '../support/test-run.js';

// Issue 38 §2: each leader task (retention, statistics) and the rematch is one span a reader can find.
// Each runs for real against this file's database with every span exported over OTLP/protobuf to a
// real receiver; the spans are read back decoded. A failure is provoked for real (a role without any
// grant), and the span says ERROR with the error's class name only, never its message.

const onPostgres = await postgresReachable();
const FEED = 'default';
const BARE_ROLE = `t_leader_spans_bare_${process.pid}`;
// OTLP's SpanKind and StatusCode (opentelemetry-proto trace.proto), as the receiver decodes them
const SPAN_KIND_INTERNAL = 1;
const STATUS_UNSET = 0;
const STATUS_ERROR = 2;

let tdb: TestDatabase;
let db: Db;
let admin: postgres.Sql;
let bare: Database;
let receiver: OtlpReceiver;
let telemetry: Telemetry;

beforeAll(async () => {
  if (!onPostgres) return;
  ({ receiver, telemetry } = await tracingTo('http/protobuf'));
  tdb = await createTestDatabase('otel_leader_spans');
  db = tdb.database.db;
  admin = postgres(tdb.url as string, { max: 1, onnotice: () => {} });
  // a role that may log in and nothing else: every task it runs fails on its first statement
  await admin.unsafe(`drop role if exists "${BARE_ROLE}"`);
  await admin.unsafe(`create role "${BARE_ROLE}" login`);
  await admin.unsafe(roleTagStatement(BARE_ROLE));
  bare = await openDatabase({ url: urlAs(tdb.url as string, BARE_ROLE) });
});
afterAll(async () => {
  if (!onPostgres) return;
  await telemetry.shutdown();
  await bare.close();
  await tdb.drop();
  await admin.unsafe(`drop role if exists "${BARE_ROLE}"`).catch(() => {});
  await admin.end({ timeout: 5 });
  await receiver.close();
});

const log = createLogger({ level: 'silent' });
const NOW = Date.parse('2025-03-01T00:00:00Z');

const cleaner = (on: Db) =>
  new RetentionCleaner({
    db: on,
    feed: FEED,
    settings: {
      policy: policy({ quarantine: 30 * DAY }),
      intervalMs: 3_600_000,
      batch: {
        initialRows: 10,
        timeoutMs: 5_000,
        detectWaiters: false,
        limits: { minRows: 1, maxRows: 10, pauseMs: 0, backoffMs: 1, maxBackoffMs: 1 },
      },
    },
    clock: { now: () => NOW },
    sleep: async () => {},
    log,
  });

const keeper = (on: Db) =>
  new StatisticsKeeper({
    db: on,
    settings: { intervalMs: 60_000, startDelayMs: 10_000 },
    clock: { now: () => NOW },
    sleep: async () => {},
    log,
  });

/** 2,000 new events, past autovacuum's analyze threshold: the next statistics pass analyzes `events`. */
async function changeEvents(prefix: string) {
  await admin.unsafe(`insert into intake_sync.events (id, feed, name, occurred_at, subscription_id, api_version, payload, identity_key, status_rank)
    select '${prefix}-' || g, 'default', 'prescription.received', now(), 'sub-' || g, '2024-12-10', '{}', '${prefix}-key-' || g, 1
    from generate_series(1, 2000) g`);
  // the server's stats are written at transaction end; make them visible to the next read now
  await admin.unsafe('select pg_stat_force_next_flush()').catch(() => {});
}

/** The one span named `name` exported since the last call (flushed to the receiver first). */
let seen = 0;
async function exportedSpan(name: string): Promise<DecodedSpan> {
  await telemetry.flush();
  const spans = receiver.spans();
  const fresh = spans.slice(seen);
  seen = spans.length;
  const named = fresh.filter((s) => s.name === name);
  expect(named, `one ${name} span exported`).toHaveLength(1);
  return named[0] as DecodedSpan;
}

/** What no span of ours may carry: a key off the allow-list, an event, a link, a status message. */
function expectOnlyAllowed(span: DecodedSpan) {
  const allowed = new Set<string>(ALLOWED_ATTRIBUTE_KEYS);
  expect(Object.keys(span.attributes).filter((k) => !allowed.has(k))).toEqual([]);
  expect(span.events).toEqual([]);
  expect(span.links).toEqual([]);
  expect(span.status.message).toBe('');
  expect(span.scope).toBe('intake-sync');
}

/** A failure's span: ERROR, `error.type` the class name, and nothing of the message anywhere. */
async function expectFailedSpan(name: string, failure: unknown, attributes: Record<string, string>) {
  expect(failure).toBeInstanceOf(Error);
  const error = failure as Error;
  const span = await exportedSpan(name);
  expect(span.status.code).toBe(STATUS_ERROR);
  // the query builder's class (its `name` is the generic 'Error', which said nothing)
  expect(span.attributes).toEqual({ ...attributes, 'error.type': 'DrizzleQueryError' });
  expect(error.constructor.name).toBe('DrizzleQueryError');
  expectOnlyAllowed(span);
  expect(JSON.stringify(span)).not.toContain(error.message);
}

describe.skipIf(!onPostgres)(`the leader tasks' spans, exported to a real OTLP receiver (${NEEDS_POSTGRES})`, () => {
  test('a retention pass is one root INTERNAL span with its task, feed and outcome', async () => {
    await db.execute(sql`insert into intake_sync.quarantine (quarantine_key, event_id, feed, reason, detail, raw, resolved_at)
      values ('q-old', 'q-old', ${FEED}, 'unmatched', 'no match', '{}'::jsonb, '2025-01-01T00:00:00Z')`);
    const result = await cleaner(db).passOnce();
    expect(result).toMatchObject({ complete: true, counts: expect.objectContaining({ quarantine: 1 }) });

    const span = await exportedSpan('intake_sync.leader retention');
    expect(span.kind).toBe(SPAN_KIND_INTERNAL);
    expect(span.parentSpanId).toBe('');
    expect(span.status.code).toBe(STATUS_UNSET);
    expect(span.attributes).toEqual({
      'intake_sync.task': 'retention',
      'intake_sync.feed': FEED,
      'intake_sync.task.outcome': 'complete',
      'intake_sync.retention.purged_rows': Object.values(result.counts).reduce((sum, rows) => sum + rows, 0),
    });
    expect(span.attributes['intake_sync.retention.purged_rows']).toBeGreaterThanOrEqual(1);
    expectOnlyAllowed(span);
  });

  test('a statistics pass is one root INTERNAL span with its task and outcome', async () => {
    await changeEvents('ev');
    const analyzed = await keeper(db).passOnce();
    expect(analyzed.map((a) => a.table)).toContain('events');

    const span = await exportedSpan('intake_sync.leader statistics');
    expect(span.kind).toBe(SPAN_KIND_INTERNAL);
    expect(span.parentSpanId).toBe('');
    expect(span.status.code).toBe(STATUS_UNSET);
    expect(span.attributes).toEqual({
      'intake_sync.task': 'statistics',
      'intake_sync.task.outcome': 'complete',
      'intake_sync.statistics.tables_analyzed': analyzed.length,
    });
    expectOnlyAllowed(span);
  });

  test('a rematch is one INTERNAL span with its task, feed and the held events it matched', async () => {
    const { version } = await loadCheckpoint(db, FEED);
    await applyPage(db, {
      feed: FEED,
      expectedVersion: version,
      nextIterator: `after-v${version}`,
      events: ['Alpha', 'Beta'].flatMap((n) => [
        event(`${n}-1`, 'accepted', '2024-12-10T10:00:00Z', { patient_last_name: n }),
        event(`${n}-2`, 'ordered', '2024-12-10T11:00:00Z', { patient_last_name: n }),
      ]),
    });
    // Alpha's prescription inserted behind every rematch's back: only a rematch finds its two events
    await db.execute(sql`insert into intake_sync.prescriptions (feed, external_id, patient_first_name, patient_last_name, patient_state,
      patient_dob, prescriber_npi, written_date, drug_ndc, identity_key)
      select feed, 'rx-alpha', 'x', 'x', 'x', 'x', 'x', 'x', 'x', identity_key from intake_sync.events
      where raw->'prescription_identity'->>'patient_last_name' = 'Alpha' limit 1`);
    expect(await rematch(db, { feed: FEED })).toMatchObject({ examined: 4, matched: 2, stillUnmatched: 2 });

    const span = await exportedSpan('intake_sync.rematch');
    expect(span.kind).toBe(SPAN_KIND_INTERNAL);
    expect(span.status.code).toBe(STATUS_UNSET);
    expect(span.attributes).toEqual({
      'intake_sync.task': 'rematch',
      'intake_sync.feed': FEED,
      'intake_sync.rematch.examined': 4,
      'intake_sync.rematch.matched': 2,
      'intake_sync.rematch.still_held': 2,
    });
    expectOnlyAllowed(span);
  });

  test('each task run by a role without grants fails, and its span is ERROR with the class name only', async () => {
    const retention = await cleaner(bare.db)
      .passOnce()
      .catch((e: unknown) => e);
    await expectFailedSpan('intake_sync.leader retention', retention, { 'intake_sync.task': 'retention', 'intake_sync.feed': FEED });

    // the activity is readable by anyone (pg_stat_all_tables); the ANALYZE, through the schema, is not
    await changeEvents('ev-more');
    const statistics = await keeper(bare.db)
      .passOnce()
      .catch((e: unknown) => e);
    await expectFailedSpan('intake_sync.leader statistics', statistics, { 'intake_sync.task': 'statistics' });

    const rematched = await rematch(bare.db, { feed: FEED }).catch((e: unknown) => e);
    await expectFailedSpan('intake_sync.rematch', rematched, { 'intake_sync.task': 'rematch', 'intake_sync.feed': FEED });
  });
});
