-- _forget_dropped_roles(clean): the feed_access records whose role is gone or is no longer the role
-- they were granted to:
-- - dropped: the OID names no role. With clean, deleted (a role created later could get the OID
--   again), each with a `role.forget` audit row.
-- - renamed: the OID names a role of another name (renamed, or a dropped role's OID taken again).
--   Never deleted here: _visible_feeds gives that role no feed at all until the owner runs
--   `intake-sync grants` for it again (fail closed: deleting would leave it unrestricted).
-- Run by `migrate` and by the script `grants` prints (as the owner, clean), and by `doctor` (listing).
-- SECURITY DEFINER: only the owner reads feed_access; the answer names roles, never a feed's data.
CREATE OR REPLACE FUNCTION "intake_sync"."_forget_dropped_roles"(clean boolean)
RETURNS TABLE (role_oid oid, role_name text, now_named text, feeds text[])
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  stale record;
BEGIN
  FOR stale IN
    SELECT a."role"::oid AS r_oid, a."role_name" AS r_name, r.rolname::text AS r_now,
      pg_catalog.array_agg(a."feed" ORDER BY a."feed") AS r_feeds
    FROM "intake_sync"."feed_access" a
    LEFT JOIN pg_catalog.pg_roles r ON r.oid = a."role"::oid
    WHERE r.oid IS NULL OR r.rolname::text <> a."role_name"
    GROUP BY a."role"::oid, a."role_name", r.rolname
    ORDER BY 2, 1
  LOOP
    role_oid := stale.r_oid;
    role_name := stale.r_name;
    now_named := stale.r_now;
    feeds := stale.r_feeds;
    IF clean AND stale.r_now IS NULL THEN
      DELETE FROM "intake_sync"."feed_access" a WHERE a."role"::oid = stale.r_oid AND a."role_name" = stale.r_name;
      PERFORM "intake_sync"."_audit"('role.forget', NULL, stale.r_name,
        pg_catalog.jsonb_build_object('oid', stale.r_oid, 'feeds', pg_catalog.to_jsonb(stale.r_feeds)));
    END IF;
    RETURN NEXT;
  END LOOP;
END
$$;

REVOKE ALL ON FUNCTION "intake_sync"."_forget_dropped_roles"(boolean) FROM PUBLIC;
