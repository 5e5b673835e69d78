import { sql } from 'drizzle-orm';
import { bigint, bigserial, boolean, index, integer, jsonb, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { intakeSync } from './store-schema.js';
import { TRACEPARENT_OF_SETTING } from './trace-context-defaults.js';

// Sends and cancellations an application asked for, delivered by the leader.

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
    /**
     * when the operator answered it (0022): a send at the prescription's first status, a cancellation at
     * its terminal one; stamped by triggers (sql/api/overdue). Keeps the overdue index to open requests.
     */
    answeredAt: timestamp('answered_at', { withTimezone: true }),
    /**
     * the row's number within its feed (0032, a trigger draws it from the feed's sequence): the id apps
     * read (outbox_status.id, send_prescription's answer), which counts no other feed's rows
     */
    feedSerial: bigint('feed_serial', { mode: 'number' }).notNull(),
    /**
     * the W3C traceparent of the app's transaction that queued it (0033): intake_sync.traceparent, set by
     * the app for its transaction, read by the default; null when unset or not valid (never refused:
     * tracing must not fail a prescription). Its delivery's span links to it
     */
    traceparent: text('traceparent').default(sql`${sql.raw(TRACEPARENT_OF_SETTING)}`),
    /** the traceparent of the delivery span of its latest claim (0033): a page that applies its events links to it */
    deliveryTraceparent: text('delivery_traceparent'),
  },
  (t) => [
    // overdue_prescriptions' `sent` and `cancel_requested` stages start at a delivery not answered yet:
    // the index holds the requests still open, not a vendor's whole history of sends (0022)
    index('outbox_awaiting_answer_idx').on(t.feed, t.kind, t.completedAt).where(sql`state = 'delivered' AND answered_at IS NULL`),
    index('outbox_feed_pending_idx').on(t.feed, t.externalId, t.id).where(sql`state = 'pending'`),
    index('outbox_feed_external_id_idx').on(t.feed, t.externalId, t.id),
    // the number leads: led by feed, the planner picked it without statistics for queries on a feed and
    // an external_id, matching the feed alone (0032)
    uniqueIndex('outbox_feed_serial_idx').on(t.feedSerial, t.feed),
    // the Feeds page counts each feed's failed rows (feed_overview): without it, every row of the feed (0032)
    index('outbox_failed_idx').on(t.feed).where(sql`state = 'failed'`),
  ],
);
