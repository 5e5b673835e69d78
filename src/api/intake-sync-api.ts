import type postgres from 'postgres';
import type { z } from 'zod';
import { DEFAULT_SCHEMA, schemaNameProblem } from '../db/schema-name.js';
import { RequestValidationError } from '../intake/errors/request-validation-error.js';
import { schemaIssuesFrom } from '../intake/errors/schema-issues.js';
import { prescriptionIdentityRequestSchema, type PrescriptionIdentityInput } from '../intake/identity.js';
import { prescriptionRequestSchema, type PrescriptionRequestInput } from '../intake/prescription.js';
import { DEFAULT_FEED, FEED_NAME_PATTERN, FEED_NAME_RULE } from '../db/feed-name.js';
import { statusChangesSince } from '../store-api/changes/status-changes-since.js';
import { overdueLongestFirst } from '../store-api/overdue/overdue-prescriptions.js';
import {
  cancelPrescription,
  outboxStatusRows,
  prescriptionStatusRow,
  registerPrescription,
  sendPrescription,
} from '../store-api/registration/prescription-calls.js';
import { runnerOfSql } from '../store-api/runner.js';
import { toStatusChange, type StatusChange } from './status-change.js';
import { asCursorExpired } from './errors/cursor-expired-error.js';
import type { OutboxEntry, OverduePrescription, PrescriptionStatus } from './rows.js';

/** A postgres.js client, or a transaction of one (`sql.begin(tx => ...)`): calls then join it. */
export type SqlExecutor = postgres.Sql | postgres.TransactionSql;

export interface IntakeSyncApiOptions {
  /** DATABASE_SCHEMA of the deployment; default intake_sync */
  schema?: string;
  /** the feed (operator account, a FEEDS_FILE name) every call acts on; default `default` */
  feed?: string;
}

/**
 * The SQL API from Node: each method is one call of a function or view of the deployment's
 * schema, so it behaves exactly as the same SQL from any other language. Inputs are checked with
 * the operator contract's own schemas first (the SQL checks them again), so a bad field fails
 * here naming its path before a round trip. Bind it to a transaction with `in(tx)` to make a
 * registration or an outbox write commit or roll back with the caller's own writes.
 */
export interface IntakeSyncApi {
  readonly schema: string;
  readonly feed: string;
  /** the same API, each call joining this transaction */
  in(tx: SqlExecutor): IntakeSyncApi;
  /** registers or updates a prescription received by fax or eRx; held events for it are rematched in the same transaction */
  registerPrescription(externalId: string, identity: PrescriptionIdentityInput): Promise<Record<string, unknown>>;
  /** queues POST /prescriptions for the leader to deliver; returns the outbox row's id, its number within the feed (outbox_status.id) */
  sendPrescription(prescription: PrescriptionRequestInput): Promise<number>;
  /** queues DELETE /prescriptions/{external_id}, delivered after any earlier send of it; returns the outbox row's id within the feed */
  cancelPrescription(externalId: string): Promise<number>;
  prescriptionStatus(externalId: string): Promise<PrescriptionStatus | null>;
  /** the outbox rows of one external_id, oldest first */
  outboxStatus(externalId: string): Promise<OutboxEntry[]>;
  /** up to maxRows changes after `cursor` (null: from the start), in commit order */
  changesSince(cursor: string | null, maxRows?: number): Promise<StatusChange[]>;
  /**
   * the prescriptions past their stage deadline, longest overdue first: of `feed` (default: this
   * API's feed), or of every feed the role may read with `feed: null`
   */
  overdue(options?: { feed?: string | null }): Promise<OverduePrescription[]>;
}

function checked<S extends z.ZodType>(schema: S, value: unknown, operation: string, prefix: string): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw new RequestValidationError(
    operation,
    schemaIssuesFrom(result.error).map((issue) => ({ ...issue, path: `${prefix}.${issue.path}` })),
  );
}

function checkedId(externalId: unknown, operation: string): string {
  if (typeof externalId !== 'string' || externalId.trim() === '') {
    throw new RequestValidationError(operation, [{ path: 'external_id', message: 'must be a non-empty string' }]);
  }
  return externalId;
}

/** The SQL API of a deployment, over the caller's own postgres.js client. */
export function intakeSyncApi(sql: SqlExecutor, options: IntakeSyncApiOptions = {}): IntakeSyncApi {
  const schema = options.schema ?? DEFAULT_SCHEMA;
  const problem = schemaNameProblem(schema);
  if (problem) throw new RequestValidationError('intakeSyncApi', [{ path: 'schema', message: problem }]);
  const feed = options.feed ?? DEFAULT_FEED;
  if (!FEED_NAME_PATTERN.test(feed)) throw new RequestValidationError('intakeSyncApi', [{ path: 'feed', message: FEED_NAME_RULE }]);
  const api = runnerOfSql(sql, schema);
  return {
    schema,
    feed,
    in: (tx) => intakeSyncApi(tx, { schema, feed }),
    async registerPrescription(externalId, identity) {
      const id = checkedId(externalId, 'registerPrescription');
      const body = checked(prescriptionIdentityRequestSchema, identity, 'registerPrescription', 'identity');
      return (await registerPrescription(api, feed, id, JSON.stringify(body))) ?? {};
    },
    async sendPrescription(prescription) {
      const body = checked(prescriptionRequestSchema, prescription, 'sendPrescription', 'prescription');
      return sendPrescription(api, feed, JSON.stringify(body));
    },
    async cancelPrescription(externalId) {
      const id = checkedId(externalId, 'cancelPrescription');
      return cancelPrescription(api, feed, id);
    },
    async prescriptionStatus(externalId) {
      const id = checkedId(externalId, 'prescriptionStatus');
      const row = await prescriptionStatusRow(api, feed, id);
      return row ? ({ ...row, events: Number(row.events) } as unknown as PrescriptionStatus) : null;
    },
    async outboxStatus(externalId) {
      const id = checkedId(externalId, 'outboxStatus');
      const rows = await outboxStatusRows(api, feed, id);
      return rows.map((r) => ({ ...r, attempts: Number(r.attempts) })) as unknown as OutboxEntry[];
    },
    async changesSince(cursor, maxRows = 500) {
      try {
        const rows = await statusChangesSince(api, cursor, maxRows);
        return rows.map((row) => toStatusChange(row));
      } catch (error) {
        throw asCursorExpired(error, cursor);
      }
    },
    async overdue(options = {}) {
      const only = options.feed === undefined ? feed : options.feed;
      if (only !== null && (typeof only !== 'string' || !FEED_NAME_PATTERN.test(only))) {
        throw new RequestValidationError('overdue', [{ path: 'feed', message: FEED_NAME_RULE }]);
      }
      return (await overdueLongestFirst(api, only)) as OverduePrescription[];
    },
  };
}
