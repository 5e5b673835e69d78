-- The audit trail (issue 18, part 3): who did what to the feed and its PHI, written in the same
-- transaction as the action. Append-only: only the owner (the retention cleaner, RETAIN_AUDIT) may
-- delete; nobody updates. Applications and operators read it through the view audit_log.
CREATE TABLE "intake_sync"."audit_entries" (
  "id" bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  "at" timestamptz NOT NULL DEFAULT pg_catalog.now(),
  -- the database role that acted (session_user: not changed by SECURITY DEFINER or SET ROLE)
  "actor" text NOT NULL,
  -- who the caller says it is beyond the role: a CLI's os user@host, an application's end user
  "on_behalf_of" text,
  "client_addr" inet,
  "action" text NOT NULL,
  "feed" text,
  -- external_id, event id or iterator: identifiers only
  "subject" text,
  -- counts, reasons, identifiers; never PHI
  "detail" jsonb NOT NULL DEFAULT '{}'::jsonb,
  CONSTRAINT "audit_entries_action_check" CHECK ("action" ~ '^[a-z][a-z_.]{0,63}$'),
  CONSTRAINT "audit_entries_subject_check" CHECK ("subject" IS NULL OR pg_catalog.length("subject") <= 512),
  CONSTRAINT "audit_entries_on_behalf_of_check" CHECK ("on_behalf_of" IS NULL OR pg_catalog.length("on_behalf_of") <= 256)
);
--> statement-breakpoint
CREATE INDEX "audit_entries_at_idx" ON "intake_sync"."audit_entries" ("at");
--> statement-breakpoint
CREATE INDEX "audit_entries_action_at_idx" ON "intake_sync"."audit_entries" ("action", "at");
--> statement-breakpoint
REVOKE ALL ON TABLE "intake_sync"."audit_entries" FROM PUBLIC;
--> statement-breakpoint
-- Records one action. Called by the SQL API's functions and by every CLI command that changes
-- state, inside their transaction, so the row commits or rolls back with the action.
-- on_behalf_of: the caller's own attribution (the CLI passes os user@host); when null, the
-- transaction's `intake_sync.actor` setting (SET LOCAL intake_sync.actor = '...') is used, which
-- lets an application name its end user without a new argument on every function.
CREATE FUNCTION "intake_sync"."_audit"(action text, feed text, subject text, detail jsonb DEFAULT '{}'::jsonb, on_behalf_of text DEFAULT NULL)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  attributed text := pg_catalog.left(COALESCE(
    on_behalf_of, NULLIF(pg_catalog.current_setting('intake_sync.actor', true), '')), 256);
BEGIN
  IF action IS NULL OR action !~ '^[a-z][a-z_.]{0,63}$' THEN
    RAISE EXCEPTION 'action: must be 1-64 of a-z _ . starting with a letter' USING ERRCODE = '22023', COLUMN = 'action';
  END IF;
  IF detail IS NOT NULL AND pg_catalog.jsonb_typeof(detail) <> 'object' THEN
    RAISE EXCEPTION 'detail: must be a json object' USING ERRCODE = '22023', COLUMN = 'detail';
  END IF;
  IF pg_catalog.octet_length(COALESCE(detail, '{}'::jsonb)::text) > 8192 THEN
    RAISE EXCEPTION 'detail: must be at most 8192 bytes of json' USING ERRCODE = '22023', COLUMN = 'detail';
  END IF;
  INSERT INTO "intake_sync"."audit_entries" ("actor", "on_behalf_of", "client_addr", "action", "feed", "subject", "detail")
  VALUES (session_user, attributed, pg_catalog.inet_client_addr(), action, pg_catalog.left(feed, 64),
          pg_catalog.left(subject, 512), COALESCE(detail, '{}'::jsonb));
END;
$$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION "intake_sync"."_audit"(text, text, text, jsonb, text) FROM PUBLIC;
--> statement-breakpoint
-- What the trail says, in the shape the docs describe: actor is the role, followed by the caller's
-- own attribution when one was given (`vendor_app (alice@ward-3)`).
CREATE VIEW "intake_sync"."audit_log" AS
  SELECT a."id", a."at",
         CASE WHEN a."on_behalf_of" IS NULL THEN a."actor" ELSE a."actor" || ' (' || a."on_behalf_of" || ')' END AS "actor",
         a."client_addr", a."action", a."feed", a."subject", a."detail"
  FROM "intake_sync"."audit_entries" a;
--> statement-breakpoint
REVOKE ALL ON TABLE "intake_sync"."audit_log" FROM PUBLIC;
--> statement-breakpoint
-- The one gate every SQL API function passes a feed through (_require_feed, 0006), with two checks
-- of their own so that later migrations each replace one: whether the feed was ever configured
-- (0011_hardening.sql) and whether the calling role may use it (0013_feed_access.sql). Until those
-- run, both accept every well-formed feed, as before. _feed_visible() is the same question for the
-- views, as a filter.
CREATE FUNCTION "intake_sync"."_feed_configured_check"(feed text) RETURNS void
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  RETURN;
END
$$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION "intake_sync"."_feed_configured_check"(text) FROM PUBLIC;
--> statement-breakpoint
CREATE FUNCTION "intake_sync"."_feed_access_check"(feed text) RETURNS void
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  RETURN;
END
$$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION "intake_sync"."_feed_access_check"(text) FROM PUBLIC;
--> statement-breakpoint
CREATE FUNCTION "intake_sync"."_feed_visible"(feed text) RETURNS boolean
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT true
$$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION "intake_sync"."_feed_visible"(text) FROM PUBLIC;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION "intake_sync"."_require_feed"(feed text) RETURNS void
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF feed IS NULL THEN
    RAISE EXCEPTION 'feed: required' USING ERRCODE = '23502', COLUMN = 'feed';
  END IF;
  IF feed !~ '^[a-z0-9_-]{1,64}$' THEN
    RAISE EXCEPTION 'feed: must be 1-64 of a-z 0-9 _ -' USING ERRCODE = '22023', COLUMN = 'feed';
  END IF;
  PERFORM "intake_sync"."_feed_configured_check"(feed);
  PERFORM "intake_sync"."_feed_access_check"(feed);
END
$$;
