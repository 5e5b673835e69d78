import { sql } from 'drizzle-orm';

/**
 * Transaction advisory lock that orders page applies (shared) against local
 * registration and rematch (exclusive). Without it a page could match before a
 * registration commits and be quarantined after that registration's rematch ran,
 * leaving an event unmatched although its prescription exists.
 */
const MATCH_LOCK_KEY = 7_305_412_901;

/** Expression taking the lock in shared mode (page apply); released at commit. */
export const matchLockShared = sql.raw(`pg_advisory_xact_lock_shared(${MATCH_LOCK_KEY})`);

/** Expression taking the lock exclusively (registration, rematch); released at commit. */
export const matchLockExclusive = sql.raw(`pg_advisory_xact_lock(${MATCH_LOCK_KEY})`);
