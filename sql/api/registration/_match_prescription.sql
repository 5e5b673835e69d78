-- The match rule with the subscription first: an event of a linked subscription matches that
-- prescription and nothing else; otherwise the plain rule (erx id, then identity). One
-- primary-key probe more per event (the link table is small: one row per resolved subscription).
-- LANGUAGE sql, STABLE, not STRICT, no SET clause, not SECURITY DEFINER: still inlined into the page
-- statement. The three-argument form (_match_prescription-without-subscription.sql) stays for callers written against it.
CREATE OR REPLACE FUNCTION "intake_sync"."_match_prescription"(event_identity_key text, event_erx_message_id text, event_feed text,
  event_subscription_id text)
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
  FROM (SELECT (SELECT l.prescription_id FROM "intake_sync"."subscription_links" l
                WHERE l.feed = event_feed AND l.subscription_id = event_subscription_id) AS linked) link
  CROSS JOIN LATERAL (
    SELECT pg_catalog.array_agg(c.id ORDER BY c.id) AS ids, pg_catalog.array_agg(c.external_id ORDER BY c.id) AS external_ids
    FROM (
      SELECT link.linked AS id, NULL::text AS external_id WHERE link.linked IS NOT NULL
      UNION ALL
      SELECT p.id, p.external_id FROM "intake_sync"."prescriptions" p
      WHERE link.linked IS NULL AND event_erx_message_id IS NOT NULL AND p.feed = event_feed AND p.erx_message_id = event_erx_message_id
      UNION ALL
      SELECT p.id, p.external_id FROM "intake_sync"."prescriptions" p
      WHERE link.linked IS NULL AND p.feed = event_feed AND p.identity_key = event_identity_key
        AND (event_erx_message_id IS NULL OR p.erx_message_id IS NULL)
        AND NOT EXISTS (
          SELECT 1 FROM "intake_sync"."prescriptions" x
          WHERE event_erx_message_id IS NOT NULL AND x.feed = event_feed AND x.erx_message_id = event_erx_message_id)
    ) c
  ) m
$$;

REVOKE ALL ON FUNCTION "intake_sync"."_match_prescription"(text, text, text, text) FROM PUBLIC;
