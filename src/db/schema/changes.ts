import { sql } from 'drizzle-orm';
import { bigint, bigserial, index, integer, primaryKey, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { xid8 } from '../xid8.js';
import { intakeSync } from './store-schema.js';

// The change feed applications follow: status changes, stamped in commit order.

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
  (t) => [
    uniqueIndex('change_commits_commit_seq_key').on(t.commitSeq),
    // the status_changes purge finds the newest commit before its cutoff with one probe (0023)
    index('change_commits_committed_at_idx').on(t.committedAt),
  ],
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
