-- _finding_key(digest): the quarantine key of a malformed event that had no usable id. The worker
-- hands in `sha256:<hex of the event's JSON>`, which anyone could confirm a guessed body against (a
-- date of birth in 84 ms, issue 33 §5); the stored and shown key is `k:` and the sha256 of this
-- database's secret (finding_key_secret, 32 random bytes) followed by that digest. A copy of the same
-- body seen again gets the same key (its finding's seen_count grows). The message is a fixed-length
-- digest, so sha256(secret || digest) needs no HMAC construction. drizzle/0029_tenant_walls.sql
-- re-keyed earlier findings the same way.
-- SECURITY DEFINER: only the owner reads the secret; EXECUTE goes to the runtime role alone (an
-- application that could run it would have its guessing oracle back).
CREATE OR REPLACE FUNCTION "intake_sync"."_finding_key"(digest text)
RETURNS text
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
  SELECT 'k:' || pg_catalog.encode(pg_catalog.sha256(s."secret" || pg_catalog.convert_to(digest, 'UTF8')), 'hex')
  FROM "intake_sync"."finding_key_secret" s
  WHERE digest IS NOT NULL
$$;

REVOKE ALL ON FUNCTION "intake_sync"."_finding_key"(text) FROM PUBLIC;
