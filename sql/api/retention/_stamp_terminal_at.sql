-- When a prescription ended: the first time its status reaches delivered or rejected (rank 4 and up)
-- or its cancellation is requested, terminal_at is stamped, once. RETAIN_TERMINAL_IDENTITIES counts
-- from it (_purge_identities). The WHEN clause keeps every other update free of the call, and the
-- column changes once per prescription, so ordinary status updates stay HOT.
CREATE OR REPLACE FUNCTION "intake_sync"."_stamp_terminal_at"() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  NEW.terminal_at := pg_catalog.now();
  RETURN NEW;
END
$$;

REVOKE ALL ON FUNCTION "intake_sync"."_stamp_terminal_at"() FROM PUBLIC;
