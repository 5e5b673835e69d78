import { sql, type SQL } from 'drizzle-orm';
import type { StoreNames } from '../../db/store-names.js';

/**
 * Transaction advisory lock that orders page applies (shared) against local
 * registration and rematch (exclusive). Without it a page could match before a
 * registration commits and be quarantined after that registration's rematch ran,
 * leaving an event unmatched although its prescription exists.
 */
const MATCH_LOCK_NAMESPACE = 7_306;

// keyed by schema: two deployments in one database never wait on each other. The SQL API
// (register_prescription) takes the same key: pg_advisory_xact_lock(7306, hashtext('<schema>')).
const key = (names: StoreNames) => `${MATCH_LOCK_NAMESPACE}, hashtext('${names.schema}')`;

/** Expression taking the lock in shared mode (page apply); released at commit. */
export const matchLockShared = (names: StoreNames): SQL => sql.raw(`pg_advisory_xact_lock_shared(${key(names)})`);

/** Expression taking the lock exclusively (registration, rematch); released at commit. */
export const matchLockExclusive = (names: StoreNames): SQL => sql.raw(`pg_advisory_xact_lock(${key(names)})`);
