import type { Db } from '../../db/connection.js';
import type { IntakeClient } from '../../intake/client.js';
import type { Logger } from '../../log/log.js';
import type { MigrationTarget } from './migration-target.js';
import type { MigrationState } from '../../sync/version-migration/migration-progress.js';

// What a subscription migration is given and what it reports (subscription-migration.ts runs it,
// subscription-move.ts moves one prescription).

export interface MigrationSummary {
  feed: string;
  from: string;
  to: string;
  target_version: string;
  dry_run: boolean;
  /** prescriptions of the set fixed when the migration started (done ones included) */
  prescriptions: number;
  already_done: number;
  created: number;
  /** a new subscription found among stored events after an unknown outcome, instead of sending again */
  adopted: number;
  /** sent again after an unknown outcome with nothing to adopt: the operator may hold a second new subscription */
  duplicate_possible: number;
  cancelled: number;
  /** old subscriptions the operator no longer knew (404) */
  already_gone: number;
  /**
   * moved, but the old subscription's id is not known yet (sent through POST /prescriptions, no event
   * yet): the migration stays incomplete and the worker keeps reading the old source; a rerun after
   * its first old-version event arrived cancels the old subscription (dry run: how many have none known)
   */
  awaiting_old_subscription: number;
  /**
   * sent through the old base URL by the outbox and not delivered yet (in flight when the migration
   * started): moved by a rerun once delivered; the migration stays incomplete until then
   */
  awaiting_send: number;
  /** finished by --release-awaiting without cancelling an old subscription (none was ever seen) */
  released: number;
  /** dry run: the external_ids that would be moved (identifiers only, never patient fields) */
  external_ids?: string[];
  /** every prescription done: the old source retires once the worker has read it to its end */
  complete: boolean;
}

export interface MigrateOptions {
  db: Db;
  feed: string;
  target: MigrationTarget;
  /** the new version's client: creates the subscriptions */
  newClient: Pick<IntakeClient, 'createSubscription'>;
  /** the old version's client: cancels the old subscriptions */
  oldClient: Pick<IntakeClient, 'cancelSubscription'>;
  dryRun: boolean;
  /**
   * finish the rows still awaiting their old subscription without cancelling one (`released`): for
   * prescriptions that never had one (registered from fax or eRx), which would otherwise keep the
   * old source draining for ever
   */
  releaseAwaiting?: boolean;
  /** who runs it, for the checkpoint audit trail */
  by: string;
  log?: Logger;
  /** one line per prescription done (identifiers only) */
  progress?(done: number, total: number, externalId: string, state: MigrationState): void;
}
