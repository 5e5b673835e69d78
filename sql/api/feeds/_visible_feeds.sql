-- The feeds the calling role may use; null: every feed (owner, superuser, or a role with no record).
-- A record grants its feeds only while its OID still names the role it was granted to (role_name).
-- One whose OID now names another role (renamed, or a dropped role's OID taken again) still
-- restricts, to nothing: that role sees no feed until `intake-sync grants` names its feeds again.
-- SECURITY DEFINER: it reads feed_access, which only the owner may read. Executable by every role:
-- a view calls it with its reader's rights, and it answers only about the caller.
CREATE OR REPLACE FUNCTION "intake_sync"."_visible_feeds"() RETURNS text[]
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  caller name := "intake_sync"."_calling_role"();
  owner_oid oid;
  feeds text[];
  restricted boolean;
BEGIN
  SELECT n.nspowner INTO owner_oid FROM pg_catalog.pg_namespace n WHERE n.nspname = 'intake_sync';
  IF pg_catalog.pg_has_role(caller, owner_oid, 'USAGE') THEN
    RETURN NULL;
  END IF;
  SELECT pg_catalog.bool_or(true),
    pg_catalog.array_agg(DISTINCT a.feed ORDER BY a.feed) FILTER (WHERE pg_catalog.pg_get_userbyid(a.role::oid) = a.role_name)
  INTO restricted, feeds
  FROM "intake_sync"."feed_access" a
  WHERE pg_catalog.pg_has_role(caller, a.role::oid, 'USAGE');
  IF restricted IS NULL THEN
    RETURN NULL;
  END IF;
  RETURN COALESCE(feeds, '{}'::text[]);
END
$$;

REVOKE ALL ON FUNCTION "intake_sync"."_visible_feeds"() FROM PUBLIC;

GRANT EXECUTE ON FUNCTION "intake_sync"."_visible_feeds"() TO PUBLIC;
