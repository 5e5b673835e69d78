-- The match rule (eRx message id, then the composite identity key), within one feed: an event of feed A never matches a prescription of
-- feed B. Every branch is a lookup on an index leading with the feed (prescriptions_feed_*_idx);
-- LANGUAGE sql, STABLE, not STRICT, no SET clause and not SECURITY DEFINER, so the planner still
-- inlines it into the calling statement.
CREATE OR REPLACE FUNCTION "intake_sync"."_match_prescription"(event_identity_key text, event_erx_message_id text, event_feed text)
RETURNS TABLE (prescription_id bigint, candidates integer, quarantine_reason text, quarantine_detail text)
LANGUAGE sql STABLE PARALLEL SAFE
AS $$
  SELECT CASE WHEN pg_catalog.cardinality(m.ids) = 1 THEN m.ids[1] END,
    COALESCE(pg_catalog.cardinality(m.ids), 0),
    CASE WHEN m.ids IS NULL THEN 'unmatched' WHEN pg_catalog.cardinality(m.ids) > 1 THEN 'ambiguous' END,
    CASE WHEN m.ids IS NULL THEN 'no local prescription matches its identity'
      WHEN pg_catalog.cardinality(m.ids) > 1 THEN pg_catalog.cardinality(m.ids) || ' local prescriptions match (external_id '
        || pg_catalog.array_to_string(m.external_ids[1:5], ', ')
        || CASE WHEN pg_catalog.cardinality(m.ids) > 5 THEN ', ...' ELSE '' END || ')'
    END
  FROM (
    SELECT pg_catalog.array_agg(c.id ORDER BY c.id) AS ids, pg_catalog.array_agg(c.external_id ORDER BY c.id) AS external_ids
    FROM (
      SELECT p.id, p.external_id FROM "intake_sync"."prescriptions" p
      WHERE event_erx_message_id IS NOT NULL AND p.feed = event_feed AND p.erx_message_id = event_erx_message_id
      UNION ALL
      SELECT p.id, p.external_id FROM "intake_sync"."prescriptions" p
      WHERE p.feed = event_feed AND p.identity_key = event_identity_key
        AND (event_erx_message_id IS NULL OR p.erx_message_id IS NULL)
        AND NOT EXISTS (
          SELECT 1 FROM "intake_sync"."prescriptions" x
          WHERE event_erx_message_id IS NOT NULL AND x.feed = event_feed AND x.erx_message_id = event_erx_message_id)
    ) c
  ) m
$$;

REVOKE ALL ON FUNCTION "intake_sync"."_match_prescription"(text, text, text) FROM PUBLIC;
