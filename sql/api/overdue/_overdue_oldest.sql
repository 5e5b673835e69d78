-- The oldest overdue prescriptions of one feed and stage, at most max_rows, oldest first: the same
-- rows overdue_prescriptions shows for that (feed, stage), read so that the work is bounded by
-- max_rows and not by the backlog (issue 34 §6: the console's Overdue page read, joined and sorted all
-- of them, 175k at bench:console's 200k prescriptions, 270-559 ms p95 under load). Each branch is one
-- range of the index overdue_prescriptions walks (prescriptions_overdue_idx, outbox_awaiting_answer_idx)
-- in its order, stopped after max_rows; only the branch of the stage runs (the others' d.stage test is
-- false before any row is read). A requested cancellation counts from its first delivery: the rows of
-- outbox_awaiting_answer_idx with no earlier delivered, unanswered cancellation of the same prescription:
-- one probe of outbox_feed_external_id_idx per row read. Its "unanswered" is written so that the
-- planner cannot use outbox_awaiting_answer_idx for the probe: with no statistics it did, scanning every
-- awaiting cancellation of the feed for each row (6.8 s for 1,001 of 3,000, bench:console's database).
-- Internal (overdue_page, overdue_counts): they check the caller's feeds first.
CREATE OR REPLACE FUNCTION "intake_sync"."_overdue_oldest"(in_feed text, in_stage text, deadline interval, max_rows integer)
RETURNS TABLE (feed text, external_id text, stage text, since timestamptz)
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
  (SELECT p.feed, p.external_id, p.status, p.status_occurred_at
  FROM "intake_sync"."prescriptions" p
  WHERE in_stage IN ('accepted', 'ordered', 'dispensed')
    AND p.feed = in_feed AND p.status = in_stage AND p.status_rank BETWEEN 1 AND 3
    AND p.cancel_delivered_at IS NULL AND p.status_occurred_at < pg_catalog.now() - deadline
  ORDER BY p.status_occurred_at LIMIT max_rows)
  UNION ALL
  (SELECT o.feed, o.external_id, 'sent', o.completed_at
  FROM "intake_sync"."outbox" o
  WHERE in_stage = 'sent'
    AND o.feed = in_feed AND o.kind = 'send' AND o.state = 'delivered' AND o.answered_at IS NULL
    AND o.completed_at < pg_catalog.now() - deadline
  ORDER BY o.completed_at LIMIT max_rows)
  UNION ALL
  (SELECT o.feed, o.external_id, 'cancel_requested', o.completed_at
  FROM "intake_sync"."outbox" o
  WHERE in_stage = 'cancel_requested'
    AND o.feed = in_feed AND o.kind = 'cancel' AND o.state = 'delivered' AND o.answered_at IS NULL
    AND o.completed_at < pg_catalog.now() - deadline
    AND NOT EXISTS (SELECT FROM "intake_sync"."outbox" e
      WHERE e.feed = o.feed AND e.external_id = o.external_id AND e.kind = 'cancel' AND e.state = 'delivered'
        -- "unanswered" in a form that does not imply outbox_awaiting_answer_idx's predicate: see above
        AND COALESCE(e.answered_at IS NULL, false) AND (e.completed_at, e.id) < (o.completed_at, o.id))
  ORDER BY o.completed_at LIMIT max_rows)
$$;

REVOKE ALL ON FUNCTION "intake_sync"."_overdue_oldest"(text, text, interval, integer) FROM PUBLIC;

COMMENT ON FUNCTION "intake_sync"."_overdue_oldest"(text, text, interval, integer) IS 'internal: the oldest overdue prescriptions of one feed and stage past a deadline, at most max_rows, each stage one index range (overdue_page, overdue_counts)';
