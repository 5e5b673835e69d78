-- RETAIN_TERMINAL_IDENTITIES: at most max_rows prescriptions of one feed that ended (terminal_at, set by
-- the trigger prescription_terminal_at) before cutoff and still hold an identity lose it: the patient and
-- prescription fields, erx_message_id and identity_key become null; external_id, status and the rest
-- stay. Walks prescriptions_identity_due_idx (feed, terminal_at; partial: only rows still holding an
-- identity), oldest first, skipping locked rows. A prescription in an unfinished `subscriptions migrate`
-- keeps its identity until that ends. Returns how many it changed; dry_run: how many are due.
CREATE OR REPLACE FUNCTION "intake_sync"."_purge_identities"(feed text, cutoff timestamptz, max_rows integer, dry_run boolean DEFAULT false)
RETURNS integer
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_variable
DECLARE
  given_feed text := feed;
  done integer := 0;
BEGIN
  -- the same checks as every class (feed, cutoff, max_rows)
  PERFORM "intake_sync"."_purge_check"('events', feed, cutoff, max_rows);
  IF dry_run THEN
    SELECT pg_catalog.count(*)::integer INTO done FROM "intake_sync"."prescriptions" p
    WHERE p.feed = given_feed AND p.terminal_at IS NOT NULL AND p.identity_key IS NOT NULL AND p.terminal_at < cutoff
      AND NOT EXISTS (SELECT 1 FROM "intake_sync"."subscription_migrations" m
                      WHERE m.feed = p.feed AND m.external_id = p.external_id AND m.state NOT IN ('done', 'released', 'not_sent'));
    RETURN done;
  END IF;
  WITH picked AS (
    SELECT p.id FROM "intake_sync"."prescriptions" p
    WHERE p.feed = given_feed AND p.terminal_at IS NOT NULL AND p.identity_key IS NOT NULL AND p.terminal_at < cutoff
      AND NOT EXISTS (SELECT 1 FROM "intake_sync"."subscription_migrations" m
                      WHERE m.feed = p.feed AND m.external_id = p.external_id AND m.state NOT IN ('done', 'released', 'not_sent'))
    ORDER BY p.terminal_at LIMIT max_rows FOR UPDATE SKIP LOCKED
  ),
  stripped AS (
    UPDATE "intake_sync"."prescriptions" p
    SET patient_first_name = NULL, patient_last_name = NULL, patient_state = NULL, patient_dob = NULL,
      prescriber_npi = NULL, written_date = NULL, drug_ndc = NULL, erx_message_id = NULL, identity_key = NULL
    FROM picked WHERE p.id = picked.id RETURNING 1
  )
  SELECT pg_catalog.count(*)::integer INTO done FROM stripped;
  RETURN done;
END
$$;

REVOKE ALL ON FUNCTION "intake_sync"."_purge_identities"(text, timestamptz, integer, boolean) FROM PUBLIC;
