-- Issue 25 item 2: no login without a grant can stall a feed. The match lock, the source lock, the
-- feed leases and the replicas' membership were advisory locks with predictable keys, and any login
-- may take any advisory lock (pg_locks shows every key held, so a secret key would leak once used).
-- They are now rows of tables only the runtime role (and the owner) may write, and a row lock needs
-- UPDATE privilege: a role without it cannot take, hold or queue for one.
--
-- feed_locks: one row per (feed, lock). A page apply takes its feed's 'match' row FOR SHARE, a
-- registration or rematch FOR UPDATE (through _feed_lock, sql/api); outbox claims take 'source' FOR
-- SHARE, the start of an API version migration FOR UPDATE. Held only for the transaction, like the
-- advisory locks they replace (a row lock never outlives its transaction, so vacuum is not held back
-- beyond what the transaction itself holds). The row ('', 'claim') serialises the claims of the
-- feeds of a schema (src/db/feed-registry.ts) by a run or the demo.
CREATE TABLE "intake_sync"."feed_locks" (
  "feed" text NOT NULL,
  "lock" text NOT NULL,
  CONSTRAINT "feed_locks_pkey" PRIMARY KEY ("feed", "lock"),
  CONSTRAINT "feed_locks_lock_check" CHECK ("lock" IN ('match', 'source', 'claim'))
);
--> statement-breakpoint
INSERT INTO "intake_sync"."feed_locks" ("feed", "lock")
SELECT c."feed", l."lock" FROM "intake_sync"."feed_checkpoints" c CROSS JOIN (VALUES ('match'), ('source')) AS l("lock")
ON CONFLICT DO NOTHING;
--> statement-breakpoint
-- feed_leases: who leads each feed (src/sync/leadership/lease-session.ts). A lease is free when it
-- expired (no heartbeat within the TTL) or when its holder's backend (holder_pid) is gone, so a
-- killed holder's feeds are taken over at once, as with the session lock before. Every statement on
-- it is a single autocommit statement: no transaction stays open for a lease's lifetime.
CREATE TABLE "intake_sync"."feed_leases" (
  "feed" text PRIMARY KEY NOT NULL,
  -- the lease session's random id (one per process's lock session)
  "holder" text NOT NULL,
  -- pg_backend_pid() of the holder's lock session: the lease dies with that session
  "holder_pid" integer NOT NULL,
  "acquired_at" timestamptz NOT NULL,
  "heartbeat_at" timestamptz NOT NULL,
  "expires_at" timestamptz NOT NULL
);
--> statement-breakpoint
-- lease_members: the live replicas of a deployment (was: holders of a shared advisory lock), for
-- the fair share of the feeds. A member counts while its backend lives and its heartbeat is recent.
CREATE TABLE "intake_sync"."lease_members" (
  "member" text PRIMARY KEY NOT NULL,
  "backend_pid" integer NOT NULL,
  "expires_at" timestamptz NOT NULL
);
--> statement-breakpoint
REVOKE ALL ON TABLE "intake_sync"."feed_locks", "intake_sync"."feed_leases", "intake_sync"."lease_members" FROM PUBLIC;
--> statement-breakpoint
-- Takes a feed's lock row until the transaction ends: FOR UPDATE (exclusive) or FOR SHARE. The row is
-- created on first use. A null feed (exclusive only) takes the lock of every feed, in feed order, as
-- the rematch of every feed does. Runs as the owner: the runtime role's statements call it, and the
-- SQL API's SECURITY DEFINER functions call it for app roles, which cannot call it themselves (an app
-- role could otherwise hold another feed's lock). Waits at most lock_timeout, then 55P03.
CREATE OR REPLACE FUNCTION "intake_sync"."_feed_lock"(feed text, lock text, exclusive boolean) RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF _feed_lock.lock IS NULL OR _feed_lock.exclusive IS NULL OR (_feed_lock.feed IS NULL AND NOT _feed_lock.exclusive) THEN
    RAISE EXCEPTION '_feed_lock: lock and exclusive are required, and a null feed (every feed) only exclusively'
      USING ERRCODE = '22004';
  END IF;
  IF _feed_lock.feed IS NULL THEN
    PERFORM 1 FROM "intake_sync"."feed_locks" l WHERE l."lock" = _feed_lock.lock ORDER BY l."feed" FOR UPDATE;
    RETURN;
  END IF;
  FOR attempt IN 1..2 LOOP
    IF _feed_lock.exclusive THEN
      PERFORM 1 FROM "intake_sync"."feed_locks" l WHERE l."feed" = _feed_lock.feed AND l."lock" = _feed_lock.lock FOR UPDATE;
    ELSE
      PERFORM 1 FROM "intake_sync"."feed_locks" l WHERE l."feed" = _feed_lock.feed AND l."lock" = _feed_lock.lock FOR SHARE;
    END IF;
    IF FOUND THEN
      RETURN;
    END IF;
    -- first use of this feed's lock: a concurrent first use waits here for the other's commit
    INSERT INTO "intake_sync"."feed_locks" ("feed", "lock") VALUES (_feed_lock.feed, _feed_lock.lock) ON CONFLICT DO NOTHING;
  END LOOP;
  RAISE EXCEPTION '_feed_lock: the % lock row of feed "%" could not be taken', _feed_lock.lock, _feed_lock.feed USING ERRCODE = '55000';
END
$$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION "intake_sync"."_feed_lock"(text, text, boolean) FROM PUBLIC;
