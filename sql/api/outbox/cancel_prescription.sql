-- Queues the cancellation of one sent prescription, audited (`outbox.cancel`, the outbox row's id).
-- The id is the row's number within its feed (outbox_status.id, 0032), not a global count.
CREATE OR REPLACE FUNCTION "intake_sync"."cancel_prescription"(external_id text, feed text DEFAULT 'default')
RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
DECLARE
  external text := "intake_sync"."_js_trim"(cancel_prescription.external_id);
  row_id bigint;
BEGIN
  PERFORM "intake_sync"."_raise_input_problem"("intake_sync"."_api_input_problem"(pg_catalog.to_jsonb(external), 'external_id'));
  IF external IS NULL THEN
    RAISE EXCEPTION 'external_id: is required' USING ERRCODE = '23502', COLUMN = 'external_id';
  END IF;
  IF external = '' THEN
    RAISE EXCEPTION 'external_id: must not be empty' USING ERRCODE = '22023', COLUMN = 'external_id';
  END IF;
  PERFORM "intake_sync"."_require_feed"(cancel_prescription.feed);
  INSERT INTO "intake_sync"."outbox" ("feed", "external_id", "kind") VALUES (cancel_prescription.feed, external, 'cancel')
  RETURNING "feed_serial" INTO row_id;
  PERFORM "intake_sync"."_audit"('outbox.cancel', cancel_prescription.feed, external, pg_catalog.jsonb_build_object('outbox_id', row_id));
  RETURN row_id;
END
$$;

REVOKE ALL ON FUNCTION "intake_sync"."cancel_prescription"(text, text) FROM PUBLIC;
