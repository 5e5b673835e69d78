-- Prescriptions that stopped moving (issue 28; docs/sql-api/overdue.md): one row per prescription
-- whose current stage has lasted longer than its feed's deadline (feed_deadlines, written by the
-- daemon at start from OVERDUE_* and FEEDS_FILE `overdue`; no row or a null deadline: never overdue).
-- A stage's clock starts at:
--   sent              the outbox's delivery of the send (completed_at), while no event has arrived
--   accepted/ordered/dispensed  the operator's occurred_at of the event that set the status
--   cancel_requested  the outbox's delivery of the cancellation, while no terminal status has arrived
-- A requested cancellation replaces the status stage. Identifiers, stages and times only (no PHI).
-- A barrier view showing the calling role's feeds only, like prescription_status.
CREATE OR REPLACE VIEW "intake_sync"."overdue_prescriptions" WITH (security_barrier) AS
WITH stages AS (
  SELECT p.feed, p.external_id, p.status AS stage, p.status_occurred_at AS since
  FROM "intake_sync"."prescriptions" p
  WHERE p.status_rank BETWEEN 1 AND 3
    AND NOT EXISTS (SELECT 1 FROM "intake_sync"."outbox" c
      WHERE c.feed = p.feed AND c.external_id = p.external_id AND c.kind = 'cancel' AND c.state = 'delivered')
  UNION ALL
  SELECT o.feed, o.external_id, 'sent', o.completed_at
  FROM "intake_sync"."outbox" o
  WHERE o.kind = 'send' AND o.state = 'delivered'
    AND NOT EXISTS (SELECT 1 FROM "intake_sync"."prescriptions" p
      WHERE p.feed = o.feed AND p.external_id = o.external_id AND p.status_rank >= 1)
    AND NOT EXISTS (SELECT 1 FROM "intake_sync"."outbox" c
      WHERE c.feed = o.feed AND c.external_id = o.external_id AND c.kind = 'cancel' AND c.state = 'delivered')
  UNION ALL
  SELECT o.feed, o.external_id, 'cancel_requested', min(o.completed_at)
  FROM "intake_sync"."outbox" o
  WHERE o.kind = 'cancel' AND o.state = 'delivered'
    AND NOT EXISTS (SELECT 1 FROM "intake_sync"."prescriptions" p
      WHERE p.feed = o.feed AND p.external_id = o.external_id AND p.status_rank >= 4)
  GROUP BY o.feed, o.external_id
)
SELECT s.feed, s.external_id, s.stage, s.since, (pg_catalog.now() - s.since - d.deadline) AS overdue_by
FROM stages s
JOIN "intake_sync"."feed_deadlines" d ON d.feed = s.feed AND d.stage = s.stage
WHERE d.deadline IS NOT NULL
  AND s.since IS NOT NULL
  AND s.since + d.deadline < pg_catalog.now()
  AND ((SELECT "intake_sync"."_visible_feeds"()) IS NULL
    OR s.feed = ANY (((SELECT "intake_sync"."_visible_feeds"()))::text[]));

COMMENT ON VIEW "intake_sync"."overdue_prescriptions" IS 'prescriptions whose current stage has lasted longer than its feed''s deadline: feed, external_id, stage, since, overdue_by; no PHI (docs/sql-api/overdue.md)';
