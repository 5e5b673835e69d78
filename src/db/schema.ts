import { sql } from 'drizzle-orm';
import {
  bigint,
  bigserial,
  boolean,
  index,
  integer,
  interval,
  json,
  jsonb,
  pgSchema,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core';
import { xid8 } from './xid8.js';

/**
 * Every object lives in one schema. Migrations are generated with the default name and the
 * migrator writes the configured DATABASE_SCHEMA in its place (see migrator.ts); runtime SQL
 * names tables through storeNames(), never through these objects.
 */
export const DEFAULT_SCHEMA = 'intake_sync';
export const intakeSync = pgSchema(DEFAULT_SCHEMA);

/** The vendor's own prescriptions, matched against feed events by identity. */
export const prescriptions = intakeSync.table(
  'prescriptions',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    /** the feed (operator account) it belongs to: only that feed's events match it (0005) */
    feed: text('feed').notNull().default('default'),
    externalId: text('external_id').notNull(),
    patientFirstName: text('patient_first_name'),
    patientLastName: text('patient_last_name'),
    patientState: text('patient_state'),
    patientDob: text('patient_dob'),
    prescriberNpi: text('prescriber_npi'),
    writtenDate: text('written_date'),
    drugNdc: text('drug_ndc'),
    erxMessageId: text('erx_message_id'),
    /**
     * identityKey() of the composite fields (src/sync/matching/identity-key.ts); the composite match key.
     * It and the identity fields above are null once RETAIN_TERMINAL_IDENTITIES removed them (0017).
     */
    identityKey: text('identity_key'),
    status: text('status'),
    /** lifecycle rank of `status` (0 = none yet); updates only ever raise it. */
    statusRank: integer('status_rank').notNull().default(0),
    statusOccurredAt: timestamp('status_occurred_at', { withTimezone: true }),
    statusEventId: text('status_event_id'),
    cancellationRequestedAt: timestamp('cancellation_requested_at', { withTimezone: true }),
    /**
     * when it ended (delivered, rejected or cancellation requested): set once by a trigger
     * (sql/api, prescription_terminal_at); RETAIN_TERMINAL_IDENTITIES counts from it (0017)
     */
    terminalAt: timestamp('terminal_at', { withTimezone: true }),
    subscriptionId: text('subscription_id'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    // external_id is unique per credential at the operator, so per feed here; the match indexes
    // lead with the feed, so _match_prescription(key, erx, feed) stays two index lookups
    uniqueIndex('prescriptions_feed_external_id_key').on(t.feed, t.externalId),
    index('prescriptions_feed_identity_key_idx').on(t.feed, t.identityKey),
    index('prescriptions_feed_erx_message_id_idx').on(t.feed, t.erxMessageId),
    // the identities retention removes, oldest end first: only rows that ended and still hold one. Neither
    // column changes on an ordinary status update, so those stay HOT (terminal_at is set once)
    index('prescriptions_identity_due_idx')
      .on(t.feed, t.terminalAt)
      .where(sql`${t.terminalAt} IS NOT NULL AND ${t.identityKey} IS NOT NULL`),
    // no index on status: every applied event updates it, and an indexed status would make each
    // of those updates non-HOT, writing into all five indexes; listing by status can scan
    // except this partial one (0019): overdue_prescriptions and its metric read the non-terminal
    // statuses by stage and start time; a prescription leaves it at `delivered` / `rejected`
    index('prescriptions_overdue_idx').on(t.feed, t.status, t.statusOccurredAt).where(sql`status_rank between 1 and 3`),
  ],
);

/**
 * Every well-formed event ever received (the inbox); the primary key (feed, id) is the dedupe:
 * event ids are the operator account's, so two accounts may hand out the same id (0007).
 */
export const events = intakeSync.table(
  'events',
  {
    id: text('id').notNull(),
    feed: text('feed').notNull(),
    name: text('name').notNull(),
    occurredAt: timestamp('occurred_at', { withTimezone: true }).notNull(),
    subscriptionId: text('subscription_id').notNull(),
    apiVersion: text('api_version').notNull(),
    payload: jsonb('payload'),
    /**
     * the event exactly as received (json keeps its text, key order included); stored as json,
     * not jsonb, because a page's jsonb parse of every body costs more than the rest of its insert
     */
    raw: json('raw').notNull(),
    identityKey: text('identity_key').notNull(),
    erxMessageId: text('erx_message_id'),
    /** statusRank() of `name` (null for an unknown name): rematch advances statuses from it */
    statusRank: integer('status_rank'),
    /**
     * prescriptions.id it was applied to. Deliberately not a foreign key: the check
     * row-locks (FOR KEY SHARE) one prescription per inserted event, a large share of
     * a page's write cost, and history must survive a vendor deleting a local record.
     */
    prescriptionId: bigint('prescription_id', { mode: 'number' }),
    receivedAt: timestamp('received_at', { withTimezone: true }).notNull().defaultNow(),
  },
  // a custom migration adds two partial indexes (sql/current-schema.sql) drizzle does not model (held events by
  // identity_key and by erx_message_id, where prescription_id is null): do not declare them here
  (t) => [primaryKey({ name: 'events_feed_id_pk', columns: [t.feed, t.id] }), index('events_prescription_id_idx').on(t.prescriptionId)],
);

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

/** Events that could not be applied: kept with the reason and raw body, never dropped. */
export const quarantine = intakeSync.table(
  'quarantine',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    /** event id, or `sha256:<hex of raw>` when the event has no usable id; unique per feed (0007). */
    quarantineKey: text('quarantine_key').notNull(),
    eventId: text('event_id'),
    feed: text('feed').notNull(),
    reason: text('reason').notNull(),
    detail: text('detail').notNull(),
    raw: jsonb('raw').notNull(),
    firstSeenAt: timestamp('first_seen_at', { withTimezone: true }).notNull().defaultNow(),
    lastSeenAt: timestamp('last_seen_at', { withTimezone: true }).notNull().defaultNow(),
    seenCount: integer('seen_count').notNull().default(1),
    resolvedAt: timestamp('resolved_at', { withTimezone: true }),
  },
  (t) => [
    uniqueIndex('quarantine_feed_key_key').on(t.feed, t.quarantineKey),
    index('quarantine_open_idx').on(t.reason).where(sql`resolved_at is null`),
  ],
);

/**
 * One row per status change (page apply, rematch, registration), appended by a trigger on
 * prescriptions in the changing transaction. `xid` ties it to change_commits, which gives the
 * commit order: ids are taken before commit, so they alone cannot.
 */
export const statusChanges = intakeSync.table(
  'status_changes',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    xid: xid8('xid').notNull().default(sql`pg_current_xact_id()`),
    prescriptionId: bigint('prescription_id', { mode: 'number' }).notNull(),
    /** the prescription's feed (0005) */
    feed: text('feed').notNull().default('default'),
    externalId: text('external_id').notNull(),
    previousStatus: text('previous_status'),
    newStatus: text('new_status').notNull(),
    eventId: text('event_id'),
    occurredAt: timestamp('occurred_at', { withTimezone: true }),
    changedAt: timestamp('changed_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('status_changes_xid_idx').on(t.xid, t.id)],
);

/**
 * One row per transaction that appended status changes; `commit_seq` is assigned by a deferred
 * trigger at commit (change_commit_seq, drawn under the change_clock table lock; see
 * stamp_change_commit in sql/current-schema.sql), so its order is the commit order.
 */
export const changeCommits = intakeSync.table(
  'change_commits',
  {
    xid: xid8('xid').primaryKey(),
    commitSeq: bigint('commit_seq', { mode: 'number' }),
    committedAt: timestamp('committed_at', { withTimezone: true }),
  },
  (t) => [uniqueIndex('change_commits_commit_seq_key').on(t.commitSeq)],
);

/**
 * Which feeds each stamped commit touched (one row per commit and feed, written by
 * stamp_change_commit): status_changes_since() of a role that sees some feeds walks its feeds'
 * rows from the cursor by this key, so a quiet feed's poll never reads another feed's commits.
 * Rows go with their commit (cascade); a purge that leaves a feed no change in a commit leaves a
 * row that joins to nothing.
 */
export const changeCommitFeeds = intakeSync.table(
  'change_commit_feeds',
  {
    feed: text('feed').notNull(),
    commitSeq: bigint('commit_seq', { mode: 'number' }).notNull(),
    xid: xid8('xid')
      .notNull()
      .references(() => changeCommits.xid, { onDelete: 'cascade' }),
  },
  (t) => [primaryKey({ name: 'change_commit_feeds_pk', columns: [t.feed, t.commitSeq] }), index('change_commit_feeds_xid_idx').on(t.xid)],
);

/**
 * The change feed's commit lock: held in EXCLUSIVE mode from drawing a commit_seq to the end of the
 * commit. `last_seq` is unused: updating a counter row fails writers at REPEATABLE READ (0003).
 */
export const changeClock = intakeSync.table('change_clock', {
  id: integer('id').primaryKey(),
  lastSeq: bigint('last_seq', { mode: 'number' }).notNull().default(0),
});

/**
 * Requests to the operator written in the vendor's transaction (send_prescription,
 * cancel_prescription) and delivered by the leader; rows of one external_id go in id order.
 */
export const outbox = intakeSync.table(
  'outbox',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    /** the feed whose credentials deliver it (0005) */
    feed: text('feed').notNull().default('default'),
    externalId: text('external_id').notNull(),
    /** 'send' | 'cancel' */
    kind: text('kind').notNull(),
    /** the `prescription` object of POST /prescriptions (send only) */
    body: jsonb('body'),
    /** 'pending' | 'delivered' | 'failed' */
    state: text('state').notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    /** a request may have reached the operator: reconcile before sending again */
    inDoubt: boolean('in_doubt').notNull().default(false),
    lastError: text('last_error'),
    /** HTTP status of the final answer, when there was one */
    responseStatus: integer('response_status'),
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true }).notNull().defaultNow(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
    lastAttemptAt: timestamp('last_attempt_at', { withTimezone: true }),
    completedAt: timestamp('completed_at', { withTimezone: true }),
    /**
     * the base URL its request went through, fixed at its first claim from the feed's current source (0009): a
     * send through a source that is draining afterwards joins that migration's set (subscription-migration.ts)
     */
    sentThrough: text('sent_through'),
  },
  (t) => [
    // overdue_prescriptions' `sent` and `cancel_requested` stages start at a delivery (0019)
    index('outbox_overdue_idx').on(t.feed, t.kind, t.completedAt).where(sql`state = 'delivered'`),
    index('outbox_feed_pending_idx').on(t.feed, t.externalId, t.id).where(sql`state = 'pending'`),
    index('outbox_feed_external_id_idx').on(t.feed, t.externalId, t.id),
  ],
);

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
  (t) => [primaryKey({ columns: [t.feed, t.stage] })],
);
