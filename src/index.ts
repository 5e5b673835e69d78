/**
 * intake-sync as a dependency: the SQL API of a deployment from Node (register, send and
 * cancel through the outbox, statuses, the change feed) and the typed operator client.
 * The daemon itself is the `intake-sync` binary.
 */
export { intakeSyncApi, type IntakeSyncApi, type IntakeSyncApiOptions, type SqlExecutor } from './api/intake-sync-api.js';
export type { OutboxEntry, PrescriptionStatus } from './api/rows.js';
export { followStatusChanges, type FollowStatusChangesOptions } from './api/change-follower.js';
export type { StatusChange } from './api/status-change.js';
export { CursorExpiredError, CURSOR_EXPIRED_SQLSTATE } from './api/errors/cursor-expired-error.js';
export { IntakeClient, type IntakeClientOptions } from './intake/client.js';
export * from './intake/errors/index.js';
export type { PrescriptionIdentity, PrescriptionIdentityInput } from './intake/identity.js';
export type { PrescriptionRequest, PrescriptionRequestInput } from './intake/prescription.js';
export { DEFAULT_SCHEMA } from './db/schema-name.js';
