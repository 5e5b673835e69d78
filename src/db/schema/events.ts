import { sql } from 'drizzle-orm';
import { bigint, bigserial, index, integer, json, jsonb, primaryKey, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { intakeSync } from './store-schema.js';

// The vendor's prescriptions, the feed's events applied to them, and what could not be applied.

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
    /**
     * when the outbox first delivered a cancellation of it: stamped by a trigger (sql/api/overdue,
     * _mark_cancel_delivered); from then on its status stage is no longer watched (0025)
     */
    cancelDeliveredAt: timestamp('cancel_delivered_at', { withTimezone: true }),
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
    // statuses by stage and start time; a prescription leaves it at `delivered` / `rejected`, or when a
    // cancellation of it is delivered (0025): then the index alone answers, with no probe per row
    index('prescriptions_overdue_idx')
      .on(t.feed, t.status, t.statusOccurredAt)
      .where(sql`status_rank between 1 and 3 AND cancel_delivered_at IS NULL`),
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
    // open findings by reason and feed, oldest first (0035, issue 34 §6): the Feeds page's count of a
    // feed's findings of one reason stops after 1,001 entries of one range (feed_overview's
    // open_findings_capped), and the quarantine list filtered by feed and reason walks it in its order.
    // Leading with reason, not feed: a lookup of an event's finding by (event_id, feed) cannot use it,
    // so with no statistics it never takes it over quarantine_open_event_idx (a (feed, reason) index did:
    // a Search walked every open finding of the feed). It replaces 0000's quarantine_open_idx (reason).
    index('quarantine_open_reason_idx').on(t.reason, t.feed, t.firstSeenAt, t.quarantineKey).where(sql`resolved_at is null`),
  ],
);
