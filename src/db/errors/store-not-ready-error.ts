/**
 * A command that only uses the store found no intake-sync schema (or no embedded store) where the
 * configuration points: only `intake-sync migrate` (and `run` with MIGRATE_ON_START) creates one, so
 * a command pointed at the wrong database refuses instead of installing itself there.
 */
export class StoreNotReadyError extends Error {
  override readonly name = 'StoreNotReadyError';
}
