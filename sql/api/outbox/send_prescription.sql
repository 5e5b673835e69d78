-- Queues one prescription for the outbox to send to the operator, audited (`outbox.send`, the
-- outbox row's id). The id is the row's number within its feed (outbox_status.id, 0032), not a
-- global count.
CREATE OR REPLACE FUNCTION "intake_sync"."send_prescription"(prescription jsonb, feed text DEFAULT 'default')
RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
DECLARE
  -- bounded input first (issue 25): a body over the cap is never walked
  problem text[] := coalesce("intake_sync"."_api_input_problem"(send_prescription.prescription, 'prescription'),
    "intake_sync"."_prescription_problem"(send_prescription.prescription));
  external text;
  row_id bigint;
BEGIN
  IF problem IS NOT NULL THEN
    RAISE EXCEPTION '%: %', problem[1], problem[2] USING ERRCODE = problem[3], COLUMN = problem[1];
  END IF;
  PERFORM "intake_sync"."_require_feed"(send_prescription.feed);
  external := "intake_sync"."_js_trim"(send_prescription.prescription ->> 'external_id');
  INSERT INTO "intake_sync"."outbox" ("feed", "external_id", "kind", "body")
  VALUES (send_prescription.feed, external, 'send', send_prescription.prescription)
  ON CONFLICT ("feed", "external_id") WHERE "kind" = 'send' AND "state" IN ('pending', 'delivered') DO NOTHING
  RETURNING "feed_serial" INTO row_id;
  IF row_id IS NULL THEN
    RAISE EXCEPTION 'prescription.external_id: already in the outbox (pending or delivered)'
      USING ERRCODE = '23505', COLUMN = 'prescription.external_id';
  END IF;
  PERFORM "intake_sync"."_audit"('outbox.send', send_prescription.feed, external, pg_catalog.jsonb_build_object('outbox_id', row_id));
  RETURN row_id;
END
$$;

REVOKE ALL ON FUNCTION "intake_sync"."send_prescription"(jsonb, text) FROM PUBLIC;
