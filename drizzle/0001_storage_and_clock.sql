-- Status updates touch no indexed column, so with room left on each heap page they are HOT
-- updates (no index writes). Registration fills pages to 100% otherwise, which turns every
-- status change into a new tuple plus one entry in each of the table's indexes.
ALTER TABLE "intake_sync"."prescriptions" SET (fillfactor = 70);
--> statement-breakpoint
-- the one row commit sequence numbers are drawn from
INSERT INTO "intake_sync"."change_clock" ("id", "last_seq") VALUES (1, 0) ON CONFLICT DO NOTHING;
--> statement-breakpoint
ALTER TABLE "intake_sync"."change_clock" ADD CONSTRAINT "change_clock_single_row" CHECK ("id" = 1);
--> statement-breakpoint
ALTER TABLE "intake_sync"."outbox" ADD CONSTRAINT "outbox_kind_check" CHECK ("kind" IN ('send', 'cancel'));
--> statement-breakpoint
ALTER TABLE "intake_sync"."outbox" ADD CONSTRAINT "outbox_state_check" CHECK ("state" IN ('pending', 'delivered', 'failed'));
