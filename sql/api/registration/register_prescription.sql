-- Registers (or updates) one local prescription, audited: one `prescription.register` row in the call's transaction,
-- saying whether the row was new and whether its identity changed (never the identity itself).
CREATE OR REPLACE FUNCTION "intake_sync"."register_prescription"(external_id text, identity jsonb, feed text DEFAULT 'default')
RETURNS "intake_sync"."prescription_registration"
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
DECLARE
  problems text[] := '{}';
  stored_id text;
  new_key text;
  new_erx text;
  old_key text;
  old_erx text;
  result "intake_sync"."prescription_registration";
BEGIN
  -- bounded input first (issue 25): nothing over a cap is parsed further
  PERFORM "intake_sync"."_raise_input_problem"(coalesce(
    "intake_sync"."_api_input_problem"(pg_catalog.to_jsonb(register_prescription.external_id), 'external_id'),
    "intake_sync"."_api_input_problem"(register_prescription.identity, 'identity')));
  IF register_prescription.external_id IS NULL THEN
    problems := problems || 'external_id: required'::text;
  ELSIF "intake_sync"."_js_trim"(register_prescription.external_id) = '' THEN
    problems := problems || 'external_id: must not be empty'::text;
  END IF;
  PERFORM "intake_sync"."_raise_invalid"(problems || "intake_sync"."_identity_problems"(register_prescription.identity, true));
  PERFORM "intake_sync"."_require_feed"(register_prescription.feed);
  PERFORM "intake_sync"."_require_read_committed"('register_prescription');
  -- exclusive against page applies: a page must not match against a half-registered set
  PERFORM "intake_sync"."_feed_lock"(register_prescription.feed, 'match', true);

  stored_id := "intake_sync"."_js_trim"(register_prescription.external_id);
  new_key := "intake_sync"."_identity_key"(register_prescription.identity);
  new_erx := "intake_sync"."_normalise_erx"(register_prescription.identity ->> 'erx_message_id');
  SELECT p.identity_key, p.erx_message_id INTO old_key, old_erx
  FROM "intake_sync"."prescriptions" p WHERE p.feed = register_prescription.feed AND p.external_id = stored_id;

  INSERT INTO "intake_sync"."prescriptions" AS p (feed, external_id, patient_first_name, patient_last_name, patient_state,
    patient_dob, prescriber_npi, written_date, drug_ndc, erx_message_id, identity_key)
  VALUES (register_prescription.feed, stored_id,
    "intake_sync"."_js_trim"(register_prescription.identity ->> 'patient_first_name'),
    "intake_sync"."_js_trim"(register_prescription.identity ->> 'patient_last_name'),
    "intake_sync"."_js_trim"(register_prescription.identity ->> 'patient_state'),
    "intake_sync"."_js_trim"(register_prescription.identity ->> 'patient_dob'),
    register_prescription.identity ->> 'prescriber_npi',
    "intake_sync"."_js_trim"(register_prescription.identity ->> 'written_date'),
    "intake_sync"."_js_trim"(register_prescription.identity ->> 'drug_ndc'),
    new_erx, new_key)
  ON CONFLICT (feed, external_id) DO UPDATE SET
    patient_first_name = excluded.patient_first_name, patient_last_name = excluded.patient_last_name,
    patient_state = excluded.patient_state, patient_dob = excluded.patient_dob,
    prescriber_npi = excluded.prescriber_npi, written_date = excluded.written_date, drug_ndc = excluded.drug_ndc,
    erx_message_id = excluded.erx_message_id, identity_key = excluded.identity_key,
    updated_at = pg_catalog.now()
  RETURNING (p.xmax = 0) INTO result.inserted;

  -- the events its new identity may now match, and those its old identity may no longer make ambiguous
  SELECT r.matched INTO result.rematched
  FROM "intake_sync"."rematch_held"(
    pg_catalog.array_remove(ARRAY[new_key, old_key], NULL),
    pg_catalog.array_remove(ARRAY[new_erx, old_erx], NULL),
    register_prescription.feed) r;
  SELECT p.status INTO result.status FROM "intake_sync"."prescriptions" p
  WHERE p.feed = register_prescription.feed AND p.external_id = stored_id;
  result.external_id := stored_id;
  PERFORM "intake_sync"."_audit"('prescription.register', register_prescription.feed, stored_id,
    pg_catalog.jsonb_build_object('inserted', result.inserted,
      'identity_changed', NOT result.inserted AND (old_key IS DISTINCT FROM new_key OR old_erx IS DISTINCT FROM new_erx),
      'rematched', COALESCE(result.rematched, 0)));
  RETURN result;
END
$$;

REVOKE ALL ON FUNCTION "intake_sync"."register_prescription"(text, jsonb, text) FROM PUBLIC;

COMMENT ON FUNCTION "intake_sync"."register_prescription"(text, jsonb, text) IS 'registers or updates a local prescription of a feed (default ''default'') received by fax or eRx and matches its held events (docs/sql-api/register.md)';
