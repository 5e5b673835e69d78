-- The finding reasons, the one list every reader takes them from: the shared quarantine filter
-- (_quarantine_filter) checks a reason against it and the operator console fills its Finding reason
-- choice from it (issue 32 §1, issue 34: the console's own copy lacked unsupported_version). The page
-- apply writes these four (src/sync/matching/quarantine.ts QUARANTINE_REASONS; a test holds the two equal).
CREATE OR REPLACE FUNCTION "intake_sync"."quarantine_reasons"() RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE SET search_path = pg_catalog, pg_temp AS $$
  SELECT ARRAY['unmatched', 'ambiguous', 'malformed', 'unsupported_version']::text[]
$$;

REVOKE ALL ON FUNCTION "intake_sync"."quarantine_reasons"() FROM PUBLIC;

COMMENT ON FUNCTION "intake_sync"."quarantine_reasons"() IS 'the finding reasons a quarantine finding can have, in display order (docs/sql-api/triage.md)';
