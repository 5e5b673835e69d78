-- Read by the operator console's prescription page (docs/console.md) as the signed-in role, and by any
-- application role: the subscriptions a visible prescription is linked to, each with how. Its own
-- (`registration`: the subscription_id it was registered or matched with) and those a triage resolve
-- linked to it (`resolve`: subscription_links, with the event resolved and when). A resolve writes
-- the link, not prescriptions.subscription_id, so the page read "Subscription —" after one (issue 34 §6).
-- Identifiers and times only. Index lookups: prescriptions_feed_external_id_key,
-- subscription_links_prescription_id_idx. SECURITY DEFINER, filtered by the caller's feeds.
CREATE OR REPLACE FUNCTION "intake_sync"."prescription_subscriptions"(in_feed text, in_external_id text)
RETURNS TABLE (subscription_id text, linked_by text, event_id text, linked_at timestamptz)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  WITH rx AS (
    SELECT p.id, p.subscription_id FROM "intake_sync"."prescriptions" p
    WHERE p.feed = $1 AND p.external_id = $2
      AND ((SELECT "intake_sync"."_visible_feeds"()) IS NULL OR p.feed = ANY ((SELECT "intake_sync"."_visible_feeds"())::text[])))
  SELECT rx.subscription_id, 'registration', NULL::text, NULL::timestamptz FROM rx WHERE rx.subscription_id IS NOT NULL
  UNION ALL
  (SELECT l.subscription_id, 'resolve', l.event_id, l.linked_at
   FROM rx JOIN "intake_sync"."subscription_links" l ON l.prescription_id = rx.id
   WHERE rx.subscription_id IS DISTINCT FROM l.subscription_id
   ORDER BY l.linked_at, l.subscription_id LIMIT 100)
$$;

REVOKE ALL ON FUNCTION "intake_sync"."prescription_subscriptions"(text, text) FROM PUBLIC;

COMMENT ON FUNCTION "intake_sync"."prescription_subscriptions"(text, text) IS 'the subscriptions a visible prescription is linked to: its own (registration) and those triage resolves linked (docs/console.md)';
