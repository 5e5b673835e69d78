import { sql } from 'drizzle-orm';
import { bigint, bigserial, boolean, check, integer, interval, jsonb, primaryKey, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { intakeSync } from './store-schema.js';

// Each feed's position and its sources: the checkpoint, its manual moves, the API versions it reads,
// a version migration's progress, and the overdue deadlines.

/** One row per feed: where to read next, and a version every write compares-and-sets. */
export const feedCheckpoints = intakeSync.table('feed_checkpoints', {
  feed: text('feed').primaryKey(),
  iterator: text('iterator'),
  version: bigint('version', { mode: 'number' }).notNull().default(0),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  pagesApplied: bigint('pages_applied', { mode: 'number' }).notNull().default(0),
  eventsApplied: bigint('events_applied', { mode: 'number' }).notNull().default(0),
  eventsQuarantined: bigint('events_quarantined', { mode: 'number' }).notNull().default(0),
});

/** Audit trail of manual checkpoint moves (replay). */
export const checkpointResets = intakeSync.table('checkpoint_resets', {
  id: bigserial('id', { mode: 'number' }).primaryKey(),
  feed: text('feed').notNull(),
  fromIterator: text('from_iterator'),
  toIterator: text('to_iterator'),
  resetBy: text('reset_by').notNull(),
  resetAt: timestamp('reset_at', { withTimezone: true }).notNull().defaultNow(),
});

/**
 * The operator base URLs a feed reads while it moves to another API version (0008). No rows: the
 * feed reads its configured base_url and its one checkpoint, as before. With rows, the `current`
 * source's position is the feed's checkpoint (feed_checkpoints: `checkpoint show/reset`, resync,
 * health and metrics stay about it); a `draining` source keeps its own position here (iterator,
 * version: the same compare-and-set as a checkpoint) until it is `retired`.
 */
export const feedSources = intakeSync.table(
  'feed_sources',
  {
    feed: text('feed').notNull(),
    baseUrl: text('base_url').notNull(),
    apiVersion: text('api_version').notNull(),
    /** 'current' | 'draining' | 'retired' */
    state: text('state').notNull(),
    /** a draining source's read position (null = its beginning); unused while current */
    iterator: text('iterator'),
    version: bigint('version', { mode: 'number' }).notNull().default(0),
    pagesApplied: bigint('pages_applied', { mode: 'number' }).notNull().default(0),
    eventsApplied: bigint('events_applied', { mode: 'number' }).notNull().default(0),
    /** draining: when `subscriptions migrate` had cancelled every old subscription (the source may then retire) */
    migrationCompletedAt: timestamp('migration_completed_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    drainingSince: timestamp('draining_since', { withTimezone: true }),
    retiredAt: timestamp('retired_at', { withTimezone: true }),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ name: 'feed_sources_pk', columns: [t.feed, t.baseUrl] }),
    // one current source per feed: the one new prescriptions and subscriptions go to
    uniqueIndex('feed_sources_one_current_key').on(t.feed).where(sql`state = 'current'`),
  ],
);

/**
 * `subscriptions migrate` progress, one row per prescription and target version (0008): each
 * state is committed before the request it announces, so a rerun resumes where a crash stopped.
 */
export const subscriptionMigrations = intakeSync.table(
  'subscription_migrations',
  {
    feed: text('feed').notNull(),
    externalId: text('external_id').notNull(),
    targetVersion: text('target_version').notNull(),
    /** the subscriptions to cancel once the new one exists (json array of ids) */
    oldSubscriptionIds: jsonb('old_subscription_ids').notNull(),
    newSubscriptionId: text('new_subscription_id'),
    /** 'pending' | 'creating' (a POST may have been sent) | 'created' | 'awaiting_old_subscription' | 'released' | 'not_sent' | 'done' */
    state: text('state').notNull().default('pending'),
    /** a POST was sent again after an unknown outcome: the operator may hold a second new subscription */
    duplicatePossible: boolean('duplicate_possible').notNull().default(false),
    attempts: integer('attempts').notNull().default(0),
    lastError: text('last_error'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ name: 'subscription_migrations_pk', columns: [t.feed, t.externalId, t.targetVersion] })],
);

/**
 * Each feed's stage deadlines (OVERDUE_* and FEEDS_FILE `overdue`), written by the daemon at start
 * so overdue_prescriptions can read them (0019). A stage without a row (or `off`) is never overdue.
 */
export const feedDeadlines = intakeSync.table(
  'feed_deadlines',
  {
    feed: text('feed').notNull(),
    /** sent | accepted | ordered | dispensed | cancel_requested */
    stage: text('stage').notNull(),
    /** null: `off` */
    deadline: interval('deadline'),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.feed, t.stage] }),
    check('feed_deadlines_stage_check', sql`${t.stage} IN ('sent', 'accepted', 'ordered', 'dispensed', 'cancel_requested')`),
  ],
);

/**
 * Why a feed stopped, as the worker leading it said it on /readyz (0026): written by that worker
 * when the feed stops for something a person must fix (the operator refusing the credentials or
 * the position, an event too large), removed by its next successful poll. The console's Feeds page
 * reads it through feed_overview, so it can say why without reaching the worker. PHI-free lines.
 */
export const feedStops = intakeSync.table(
  'feed_stops',
  {
    feed: text('feed').primaryKey(),
    stoppedAt: timestamp('stopped_at', { withTimezone: true }).notNull().defaultNow(),
    /** the /readyz line */
    reason: text('reason').notNull(),
    /** the command that fixes it, when one does (a restart after a settings fix has none) */
    command: text('command'),
  },
  (t) => [
    check('feed_stops_reason_length', sql`char_length(${t.reason}) BETWEEN 1 AND 1000`),
    check('feed_stops_command_length', sql`char_length(${t.command}) <= 300`),
  ],
);

/**
 * A feed paused by a person (`intake-sync feeds pause`, 0027): every replica's worker for it polls
 * nothing and sends nothing until `feeds resume` removes the row; its lag alerts are silenced. Written
 * only through pause_feed()/resume_feed() (sql/api/feeds/), which audit each change.
 */
export const feedPauses = intakeSync.table(
  'feed_pauses',
  {
    feed: text('feed').primaryKey(),
    /** a code, not prose (it is audited, shown in metrics and alerts): `clinic_leaving`, `operator_review` */
    reason: text('reason').notNull(),
    pausedBy: text('paused_by').notNull(),
    pausedAt: timestamp('paused_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [check('feed_pauses_reason_code', sql`${t.reason} ~ '^[a-z][a-z0-9_.-]{0,63}$'`)],
);

/**
 * A feed a reload removed from FEEDS_FILE (0027): no replica runs it any more; its data stays under
 * retention. The row goes when a FEEDS_FILE names the feed again.
 */
export const feedRetirements = intakeSync.table('feed_retirements', {
  feed: text('feed').primaryKey(),
  retiredAt: timestamp('retired_at', { withTimezone: true }).notNull().defaultNow(),
});
