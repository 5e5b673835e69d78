-- events.raw keeps each event as received: json stores its text, where jsonb would parse every
-- body of every page into its binary form (a large share of the page write) for no reader's benefit.
ALTER TABLE "events" ALTER COLUMN "raw" SET DATA TYPE json;
