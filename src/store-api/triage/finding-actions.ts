import { attributionOf } from '../../db/audit.js';
import { qualified, type RunnerSource, runnerOf, type SqlApiRunner } from '../runner.js';
import { TriageRefusedError } from './errors/triage-refused-error.js';

// SQLSTATEs the triage functions refuse with (sql/api/triage/); anything else is a failure
const REFUSALS = new Set(['23502', '22023', 'P0002', '55000']);

/** One finding with the identity the operator sent: PHI, for triage staff only (the read is audited). */
export interface QuarantinedFinding {
  feed: string;
  event_id: string | null;
  reason: string;
  detail: string;
  event_name: string | null;
  occurred_at: string | null;
  subscription_id: string | null;
  held_since: string;
  resolved_at: string | null;
  resolution: string | null;
  resolution_note: string | null;
  prescription_identity: Record<string, unknown> | null;
}

export interface ResolveResult {
  subscription_id: string;
  /** held events of the subscription applied to the prescription (the resolved one included) */
  events_applied: number;
  /** the prescription's status afterwards */
  status: string | null;
}

/**
 * Who acts, for the audit rows the SQL functions write: `_audit` reads intake_sync.actor when given
 * no attribution. Absent (a console user's own connection), the audit row names the session's role.
 */
export interface Attribution {
  actor: string;
}

const iso = (v: unknown) => (v === null || v === undefined ? null : new Date(v as string | Date).toISOString());

function serverError(error: unknown): { code: string; message: string } | undefined {
  for (let current: unknown = error, depth = 0; current instanceof Error && depth < 5; current = current.cause, depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return { code, message: current.message };
  }
  return undefined;
}

/**
 * Runs one triage call in its own transaction with the caller's attribution set (when given),
 * turning the function's refusals into TriageRefusedError.
 */
async function triageCall<T extends object>(
  runner: SqlApiRunner,
  by: Attribution | undefined,
  text: string,
  params: unknown[],
): Promise<T[]> {
  try {
    return await runner.transaction(async (tx) => {
      if (by) await tx.query(`select set_config('intake_sync.actor', $1, true)`, [attributionOf(by.actor)]);
      return tx.query<T>(text, params);
    });
  } catch (error) {
    const server = serverError(error);
    if (server && REFUSALS.has(server.code)) throw new TriageRefusedError(server.message, server.code, { cause: error });
    throw error;
  }
}

/**
 * request_reveal(): the durable record of a PHI read, in a transaction of its own that commits before
 * the read (show_quarantined refuses without one). Returns the audit row's id.
 */
export async function requestReveal(source: RunnerSource, feed: string, key: string, by?: Attribution): Promise<number> {
  const runner = runnerOf(source);
  const [row] = await triageCall<{ id: unknown }>(runner, by, `select ${qualified(runner, 'request_reveal')}($1::text, $2::text) as id`, [
    feed,
    key,
  ]);
  return Number(row?.id);
}

/**
 * One finding with its identity, in the two steps the SQL API requires, the only place they are
 * written: request_reveal() committed first (quarantine.reveal_requested: the read is on record even
 * if what follows rolls back), then show_quarantined() in a new transaction, which writes quarantine.show.
 */
export async function showQuarantined(source: RunnerSource, feed: string, key: string, by?: Attribution): Promise<QuarantinedFinding> {
  const runner = runnerOf(source);
  await requestReveal(runner, feed, key, by);
  const [row] = await triageCall<Record<string, unknown>>(
    runner,
    by,
    `select * from ${qualified(runner, 'show_quarantined')}($1::text, $2::text)`,
    [feed, key],
  );
  if (!row) throw new TriageRefusedError(`event_id: no quarantine finding with this id in feed ${feed}`, 'P0002');
  const identity = row.prescription_identity;
  return {
    feed: row.finding_feed as string,
    event_id: (row.finding_event_id as string | null) ?? null,
    reason: row.reason as string,
    detail: row.detail as string,
    event_name: (row.event_name as string | null) ?? null,
    occurred_at: iso(row.occurred_at),
    subscription_id: (row.subscription_id as string | null) ?? null,
    held_since: iso(row.held_since) as string,
    resolved_at: iso(row.resolved_at),
    resolution: (row.resolution as string | null) ?? null,
    resolution_note: (row.resolution_note as string | null) ?? null,
    // the driver may hand jsonb over as text
    prescription_identity: (typeof identity === 'string' ? JSON.parse(identity) : identity) as Record<string, unknown> | null,
  };
}

/** resolve_quarantined(): "this event is prescription externalId"; audited as quarantine.resolve. */
export async function resolveQuarantined(
  source: RunnerSource,
  feed: string,
  key: string,
  externalId: string,
  by?: Attribution,
): Promise<ResolveResult> {
  const runner = runnerOf(source);
  const [row] = await triageCall<{ subscription_id: string; events_applied: number; status: string | null }>(
    runner,
    by,
    `select subscription_id, events_applied, status from ${qualified(runner, 'resolve_quarantined')}($1::text, $2::text, $3::text)`,
    [feed, key, externalId],
  );
  return { subscription_id: row?.subscription_id ?? '', events_applied: Number(row?.events_applied ?? 0), status: row?.status ?? null };
}

/**
 * dismiss_quarantined(): "this event is not ours", and unless onlyThisEvent every other open finding
 * of its subscription; audited per finding as quarantine.dismiss. Returns how many findings it closed.
 */
export async function dismissQuarantined(
  source: RunnerSource,
  feed: string,
  key: string,
  reason: string,
  by: Attribution | undefined,
  onlyThisEvent = false,
): Promise<number> {
  const runner = runnerOf(source);
  const [row] = await triageCall<{ closed: number }>(
    runner,
    by,
    `select ${qualified(runner, 'dismiss_quarantined')}($1::text, $2::text, $3::text, $4::boolean) as closed`,
    [feed, key, reason, onlyThisEvent],
  );
  return Number(row?.closed ?? 0);
}
