-- What the trail says, in the shape the docs describe: actor is the role, followed by the caller's
-- own attribution when one was given (`vendor_app (alice@ward-3)`).
CREATE OR REPLACE VIEW "intake_sync"."audit_log" AS
  SELECT a."id", a."at",
         CASE WHEN a."on_behalf_of" IS NULL THEN a."actor" ELSE a."actor" || ' (' || a."on_behalf_of" || ')' END AS "actor",
         a."client_addr", a."action", a."feed", a."subject", a."detail"
  FROM "intake_sync"."audit_entries" a;

REVOKE ALL ON TABLE "intake_sync"."audit_log" FROM PUBLIC;
