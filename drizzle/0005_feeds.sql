DROP INDEX "intake_sync"."outbox_pending_idx";--> statement-breakpoint
DROP INDEX "intake_sync"."outbox_external_id_idx";--> statement-breakpoint
DROP INDEX "intake_sync"."prescriptions_external_id_key";--> statement-breakpoint
DROP INDEX "intake_sync"."prescriptions_identity_key_idx";--> statement-breakpoint
DROP INDEX "intake_sync"."prescriptions_erx_message_id_idx";--> statement-breakpoint
ALTER TABLE "intake_sync"."outbox" ADD COLUMN "feed" text DEFAULT 'default' NOT NULL;--> statement-breakpoint
ALTER TABLE "intake_sync"."prescriptions" ADD COLUMN "feed" text DEFAULT 'default' NOT NULL;--> statement-breakpoint
ALTER TABLE "intake_sync"."status_changes" ADD COLUMN "feed" text DEFAULT 'default' NOT NULL;--> statement-breakpoint
CREATE INDEX "outbox_feed_pending_idx" ON "intake_sync"."outbox" USING btree ("feed","external_id","id") WHERE state = 'pending';--> statement-breakpoint
CREATE INDEX "outbox_feed_external_id_idx" ON "intake_sync"."outbox" USING btree ("feed","external_id","id");--> statement-breakpoint
CREATE UNIQUE INDEX "prescriptions_feed_external_id_key" ON "intake_sync"."prescriptions" USING btree ("feed","external_id");--> statement-breakpoint
CREATE INDEX "prescriptions_feed_identity_key_idx" ON "intake_sync"."prescriptions" USING btree ("feed","identity_key");--> statement-breakpoint
CREATE INDEX "prescriptions_feed_erx_message_id_idx" ON "intake_sync"."prescriptions" USING btree ("feed","erx_message_id");