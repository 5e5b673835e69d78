import { qualified, rowLimit, type RunnerSource, runnerOf } from '../runner.js';

/** register_prescription(): registers or updates a local prescription (its identity, already checked, as JSON text). */
export async function registerPrescription(
  source: RunnerSource,
  feed: string,
  externalId: string,
  identityJson: string,
): Promise<Record<string, unknown> | undefined> {
  const runner = runnerOf(source);
  const [row] = await runner.query<Record<string, unknown>>(
    `select * from ${qualified(runner, 'register_prescription')}($1::text, $2::text::jsonb, $3::text)`,
    [externalId, identityJson, feed],
  );
  return row;
}

/** send_prescription(): queues POST /prescriptions (the request, already checked, as JSON text); the outbox row id. */
export async function sendPrescription(source: RunnerSource, feed: string, requestJson: string): Promise<number> {
  const runner = runnerOf(source);
  const [row] = await runner.query<{ id: unknown }>(`select ${qualified(runner, 'send_prescription')}($1::text::jsonb, $2::text) as id`, [
    requestJson,
    feed,
  ]);
  return Number(row?.id);
}

/** cancel_prescription(): queues DELETE /prescriptions/{external_id}; the outbox row id. */
export async function cancelPrescription(source: RunnerSource, feed: string, externalId: string): Promise<number> {
  const runner = runnerOf(source);
  const [row] = await runner.query<{ id: unknown }>(`select ${qualified(runner, 'cancel_prescription')}($1::text, $2::text) as id`, [
    externalId,
    feed,
  ]);
  return Number(row?.id);
}

/** A row of prescription_status as the console lists it. */
export interface PrescriptionRow {
  feed: string;
  external_id: string;
  status: string | null;
  status_occurred_at: Date | null;
  events: number;
  subscription_id: string | null;
  updated_at: Date;
}

/** The whole prescription_status row of one prescription, or undefined when the role cannot see it. */
export async function prescriptionStatusRow(
  source: RunnerSource,
  feed: string,
  externalId: string,
): Promise<Record<string, unknown> | undefined> {
  const runner = runnerOf(source);
  const [row] = await runner.query<Record<string, unknown>>(
    `select * from ${qualified(runner, 'prescription_status')} where feed = $2::text and external_id = $1::text`,
    [externalId, feed],
  );
  return row;
}

/** One prescription as the console shows it, or undefined. */
export async function prescription(source: RunnerSource, feed: string, externalId: string): Promise<PrescriptionRow | undefined> {
  const runner = runnerOf(source);
  const [row] = await runner.query<PrescriptionRow>(
    `select feed, external_id, status, status_occurred_at, events, subscription_id, updated_at from ${qualified(runner, 'prescription_status')} where feed = $1 and external_id = $2`,
    [feed, externalId],
  );
  return row;
}

/**
 * The search of prescriptions whose external_id starts with `q`. LIKE is not leakproof, so through the
 * security_barrier view it cannot reach an index; the bytewise range (~>=~, ~<~ are leakproof) narrows
 * by prescriptions_external_id_pattern_idx and LIKE keeps the exact meaning. The upper bound is the
 * prefix with its last character's code point plus one (bytewise order of UTF-8 is code point order). Pure.
 */
export function prescriptionSearch(schema: string, q: string): { text: string; params: string[] } {
  const last = q.codePointAt(q.length - 1) ?? 0;
  const upper = `${q.slice(0, -1)}${String.fromCodePoint(last + 1)}`;
  return {
    text: `select feed, external_id, status, status_occurred_at, events, subscription_id, updated_at from ${qualified({ schema }, 'prescription_status')}
      where external_id ~>=~ $2 and external_id ~<~ $3 and external_id like $1 escape '\\' order by external_id, feed limit 50`,
    params: [`${likePrefix(q)}%`, q, upper],
  };
}

/** `q` with LIKE's wildcards and its escape character escaped. Pure. */
function likePrefix(q: string): string {
  return q.replace(/[\\%_]/g, (ch) => `\\${ch}`);
}

/** Up to 50 prescriptions of any visible feed whose external_id starts with `q`, by external_id. */
export async function searchPrescriptions(source: RunnerSource, q: string): Promise<PrescriptionRow[]> {
  const runner = runnerOf(source);
  const search = prescriptionSearch(runner.schema, q);
  return runner.query<PrescriptionRow>(search.text, search.params);
}

/** Up to 20 prescriptions of a feed whose external_id starts with `q` (a finding's Resolve helper). */
export async function prescriptionsStartingWith(
  source: RunnerSource,
  feed: string,
  q: string,
): Promise<{ external_id: string; status: string | null }[]> {
  const runner = runnerOf(source);
  return runner.query(
    `select external_id, status from ${qualified(runner, 'prescription_status')} where feed = $1 and external_id like $2 escape '\\' order by external_id limit 20`,
    [feed, `${likePrefix(q)}%`],
  );
}

/** A status change of prescription_history. */
export interface HistoryRow {
  previous_status: string | null;
  new_status: string;
  event_id: string | null;
  occurred_at: Date | null;
  changed_at: Date;
}

/** A prescription's status changes, oldest first, at most `limit`. */
export async function prescriptionHistory(source: RunnerSource, feed: string, externalId: string, limit: number): Promise<HistoryRow[]> {
  const runner = runnerOf(source);
  return runner.query<HistoryRow>(
    `select previous_status, new_status, event_id, occurred_at, changed_at from ${qualified(runner, 'prescription_history')} where feed = $1 and external_id = $2 order by id limit ${rowLimit(limit)}`,
    [feed, externalId],
  );
}

/** An outbox row as the console shows it. */
export interface OutboxRow {
  id: string;
  kind: string;
  state: string;
  attempts: number;
  response_status: number | null;
  created_at: Date;
  completed_at: Date | null;
}

/** A prescription's outbox rows, oldest first, at most `limit` (none: every column of each). */
export async function outboxRows(source: RunnerSource, feed: string, externalId: string, limit: number): Promise<OutboxRow[]> {
  const runner = runnerOf(source);
  return runner.query<OutboxRow>(
    `select id, kind, state, attempts, response_status, created_at, completed_at from ${qualified(runner, 'outbox_status')} where feed = $1 and external_id = $2 order by id limit ${rowLimit(limit)}`,
    [feed, externalId],
  );
}

/** Every column of a prescription's outbox rows, oldest first (the public Node API's outboxStatus). */
export async function outboxStatusRows(source: RunnerSource, feed: string, externalId: string): Promise<Record<string, unknown>[]> {
  const runner = runnerOf(source);
  return runner.query<Record<string, unknown>>(
    `select * from ${qualified(runner, 'outbox_status')} where feed = $2::text and external_id = $1::text order by id`,
    [externalId, feed],
  );
}

/** A subscription linked to a prescription: by its registration, or by which resolve. */
export interface SubscriptionLink {
  subscription_id: string;
  linked_by: string;
  event_id: string | null;
  linked_at: Date | null;
}

/** prescription_subscriptions(): the prescription's own subscription and those a resolve linked to it. */
export async function prescriptionSubscriptions(source: RunnerSource, feed: string, externalId: string): Promise<SubscriptionLink[]> {
  const runner = runnerOf(source);
  return runner.query<SubscriptionLink>(
    `select subscription_id, linked_by, event_id, linked_at from ${qualified(runner, 'prescription_subscriptions')}($1, $2)`,
    [feed, externalId],
  );
}
