-- Prescriptions that stopped moving (issue 28; docs/sql-api/overdue.md): one row per prescription
-- whose current stage has lasted longer than its feed's deadline (feed_deadlines, written by the
-- daemon at start from OVERDUE_* and FEEDS_FILE `overdue`; no row or a null deadline: never overdue).
-- A stage's clock starts at:
--   sent              the outbox's delivery of the send (completed_at), while no event has arrived
--   accepted/ordered/dispensed  the operator's occurred_at of the event that set the status
--   cancel_requested  the outbox's delivery of the cancellation, while no terminal status has arrived
-- A requested cancellation replaces the status stage. Identifiers, stages and times only (no PHI).
-- A barrier view showing the calling role's feeds only, like prescription_status.
--
-- Read at every scrape (intake_sync_prescriptions_overdue), so each branch is one index range that
-- holds only what can be overdue, whatever the statistics, with no probe per row: the status stages
-- walk prescriptions_overdue_idx (non-terminal statuses whose cancellation was not delivered) up to
-- now() - deadline; `sent` and `cancel_requested` walk outbox_awaiting_answer_idx, the delivered
-- requests not answered yet. The triggers in this folder keep those facts: answered_at
-- (_mark_outbox_answered: a send at the first status, a cancellation at a terminal one;
-- _mark_cancel_delivered: a send when a cancellation is delivered; _stamp_answered_request: a request
-- queued after its answer) and prescriptions.cancel_delivered_at (_mark_cancel_delivered,
-- _stamp_cancel_delivered). A probe per row cost ~10 us at each scrape, and a partial index of the
-- delivered cancellations, with no statistics, was scanned whole per row instead (7 s at 1M).
CREATE OR REPLACE VIEW "intake_sync"."overdue_prescriptions" WITH (security_barrier) AS
SELECT s.feed, s.external_id, s.stage, s.since, (pg_catalog.now() - s.since - d.deadline) AS overdue_by
FROM "intake_sync"."feed_deadlines" d
CROSS JOIN LATERAL (
  SELECT p.feed, p.external_id, p.status AS stage, p.status_occurred_at AS since
  FROM "intake_sync"."prescriptions" p
  WHERE d.stage IN ('accepted', 'ordered', 'dispensed')
    AND p.feed = d.feed AND p.status = d.stage AND p.status_rank BETWEEN 1 AND 3
    AND p.cancel_delivered_at IS NULL AND p.status_occurred_at < pg_catalog.now() - d.deadline
  UNION ALL
  SELECT o.feed, o.external_id, 'sent', o.completed_at
  FROM "intake_sync"."outbox" o
  WHERE d.stage = 'sent'
    AND o.feed = d.feed AND o.kind = 'send' AND o.state = 'delivered' AND o.answered_at IS NULL
    AND o.completed_at < pg_catalog.now() - d.deadline
  UNION ALL
  SELECT o.feed, o.external_id, 'cancel_requested', min(o.completed_at)
  FROM "intake_sync"."outbox" o
  WHERE d.stage = 'cancel_requested'
    AND o.feed = d.feed AND o.kind = 'cancel' AND o.state = 'delivered' AND o.answered_at IS NULL
    -- the earliest delivery is past the cutoff exactly when one is: the range serves the min as well
    AND o.completed_at < pg_catalog.now() - d.deadline
  GROUP BY o.feed, o.external_id
) s
WHERE d.deadline IS NOT NULL
  AND ((SELECT "intake_sync"."_visible_feeds"()) IS NULL
    OR d.feed = ANY (((SELECT "intake_sync"."_visible_feeds"()))::text[]));

COMMENT ON VIEW "intake_sync"."overdue_prescriptions" IS 'prescriptions whose current stage has lasted longer than its feed''s deadline: feed, external_id, stage, since, overdue_by; no PHI (docs/sql-api/overdue.md)';
