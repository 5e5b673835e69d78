import { sql } from 'drizzle-orm';
import { bigint, bigserial, index, primaryKey, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { xid8 } from '../xid8.js';
import { intakeSync } from './store-schema.js';
import { TRACE_ID_OF_SETTING } from './trace-context-defaults.js';

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
    /** the change's number within its feed (0032, drawn by a trigger): prescription_history's id */
    feedSerial: bigint('feed_serial', { mode: 'number' }).notNull(),
    /**
     * the trace of the transaction that made the change (0033): the page's span when tracing is on, an
     * app's own when it set intake_sync.traceparent; read from that transaction-local setting by the
     * default, null when unset or not a valid W3C traceparent. status_changes_since returns it
     */
    traceId: text('trace_id').default(sql`${sql.raw(TRACE_ID_OF_SETTING)}`),
  },
  // (xid, feed, id): a feed's changes of one commit, in order, by the key alone. The feed column keeps
  // no planner statistics (an app's EXPLAIN must not count another feed's rows), so an index that
  // matched only the xid lost to (feed, external_id, id) and walked every change of the feed per commit
  (t) => [index('status_changes_xid_idx').on(t.xid, t.feed, t.id)],
);

/**
 * One row per transaction that appended status changes; its insert fires the deferred trigger that
 * stamps the commit (stamp_change_commit, sql/api/changes). `committed_at` is set then; `commit_seq`
 * is the global order of commits stamped before 0030, null since (each feed has its own clock).
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
 * stamp_change_commit): `commit_seq` is the feed's own clock (change_clocks), its order the
 * feed's commit order. status_changes_since() walks its feeds' rows from the cursor by this key, so
 * a quiet feed's poll never reads another feed's commits. `committed_at` grows with it (drawn under
 * the same clock row): retention finds the feed's newest commit before its cutoff with one probe.
 * Rows go with their commit (cascade) or with the feed's changes of it (retention).
 */
export const changeCommitFeeds = intakeSync.table(
  'change_commit_feeds',
  {
    feed: text('feed').notNull(),
    commitSeq: bigint('commit_seq', { mode: 'number' }).notNull(),
    xid: xid8('xid')
      .notNull()
      .references(() => changeCommits.xid, { onDelete: 'cascade' }),
    committedAt: timestamp('committed_at', { withTimezone: true }),
  },
  (t) => [
    primaryKey({ name: 'change_commit_feeds_pk', columns: [t.feed, t.commitSeq] }),
    index('change_commit_feeds_xid_idx').on(t.xid),
    index('change_commit_feeds_committed_at_idx').on(t.feed, t.committedAt),
  ],
);

/**
 * One commit clock per feed (0030, issue 33): a row per feed that has committed a change, locked by
 * stamp_change_commit from drawing the feed's commit_seq (its own sequence, change_clock_<sha256 of
 * the feed>) to the end of the commit, so it orders that feed's commits and no other feed's. The row
 * is never updated (a writer at REPEATABLE READ would fail an update another commit made since its
 * snapshot; a lock-only row and nextval() ignore snapshots). A feed's sequence starts above
 * change_commit_seq, the global clock frozen at 0030, so a cursor taken before it is a position in
 * every feed.
 */
export const changeClocks = intakeSync.table('change_clocks', {
  feed: text('feed').primaryKey(),
});
