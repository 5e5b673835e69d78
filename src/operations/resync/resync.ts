import { sql } from 'drizzle-orm';
import { queryRows, type Db } from '../../db/connection.js';
import { jsonColumn } from '../../db/json-column.js';
import { recordAudit } from '../../store-api/audit/audit-entries.js';
import { namesOf } from '../../db/store-names.js';
import type { IntakeClient } from '../../intake/client.js';
import { NotFoundError } from '../../intake/errors/not-found-error.js';
import type { PrescriptionIdentity } from '../../intake/identity.js';
import type { Logger } from '../../log/log.js';
import { resetCheckpoint } from '../../sync/poll/checkpoint.js';
import { setSubscriptionId } from '../../sync/matching/sent-prescriptions.js';
import { identityFromRow } from '../../sync/matching/identity-row.js';
import { STATUS_RANKS } from '../../sync/matching/status-rank.js';

/** Ranks after which nothing more is expected: a prescription there is not re-subscribed. */
const TERMINAL_RANK = Math.min(STATUS_RANKS.delivered, STATUS_RANKS.rejected);

export interface ResyncOptions {
  db: Db;
  client: Pick<IntakeClient, 'createSubscription' | 'cancelSubscription'>;
  feed: string;
  /** who runs it, for the checkpoint audit trail */
  by: string;
  log?: Logger;
  /** why it runs, added to the `started` audit row (the CLI: the cursor problem found, and whether --force) */
  auditDetail?: Record<string, unknown>;
}

export interface ResyncSummary {
  feed: string;
  /** the position given up (null: it was already the beginning) */
  from: string | null;
  /** the checkpoint version after the restart: a running worker sees it moved and reads on */
  version: number;
  /** non-terminal prescriptions given a new subscription with backfill */
  resubscribed: number;
  /** their earlier subscriptions cancelled (404s count: already gone) */
  cancelled: number;
  /** prescriptions already delivered or rejected, left as they are */
  terminal: number;
}

export interface Candidate {
  external_id: string;
  identity: PrescriptionIdentity;
  /** every subscription we know publishes for it: the recorded one and those its events came under */
  old_subscriptions: string[];
}

/**
 * Recovers a feed whose stored position the operator no longer serves (docs/resync.md):
 * 1. restarts the cursor at the oldest retained event (null: GET /events without an iterator),
 *    audited like `checkpoint reset`, so a running worker reads on at once (retention keeps running);
 * 2. for each non-terminal local prescription, creates a subscription with
 *    backfill_previous_events = true (the operator republishes its logged events, with new ids,
 *    at the end of the feed), records it, then cancels the earlier subscriptions so later events
 *    are not published twice.
 * Events are deduped by id and statuses only move forward, so the republished copies change no
 * status; they add history rows under new ids. Rerunning after a failure is safe (more copies).
 */
export async function resync(options: ResyncOptions): Promise<ResyncSummary> {
  const { db, feed } = options;
  const names = namesOf(db);
  // audited before anything changes (a crash part-way still leaves who started it) and when it ends:
  // it spans requests to the operator, so no single transaction holds all of it
  await recordAudit(db, names, { action: 'feed.resync', feed, detail: { ...options.auditDetail, phase: 'started' } }, options.by);
  const progress = { resubscribed: 0, cancelled: 0 };
  try {
    const summary = await resyncSteps(options, progress);
    const { resubscribed, cancelled, terminal, version } = summary;
    await recordAudit(
      db,
      names,
      { action: 'feed.resync', feed, detail: { phase: 'finished', version, resubscribed, cancelled, terminal } },
      options.by,
    );
    return summary;
  } catch (error) {
    const failure = { phase: 'failed', ...progress, error: error instanceof Error ? error.name : 'unknown' };
    await recordAudit(db, names, { action: 'feed.resync', feed, detail: failure }, options.by).catch(() => {});
    throw error;
  }
}

async function resyncSteps(options: ResyncOptions, progress: { resubscribed: number; cancelled: number }): Promise<ResyncSummary> {
  const { db, client, feed, log } = options;
  const reset = await resetCheckpoint(db, feed, { to: null, by: `resync by ${options.by}` });
  log?.info({ feed, version: reset.version }, 'resync: cursor restarted at the oldest retained event');
  const { candidates, terminal } = await loadCandidates(db, feed);
  let resubscribed = 0;
  let cancelled = 0;
  for (const candidate of candidates) {
    let created: string;
    try {
      ({ id: created } = await client.createSubscription({ prescription_identity: candidate.identity, backfill_previous_events: true }));
    } catch (error) {
      throw new Error(
        `resync of feed ${feed}: subscribing external_id ${candidate.external_id} failed after ${resubscribed} of ${candidates.length}; ` +
          `the cursor is already restarted; rerun resync to finish (${error instanceof Error ? error.message : String(error)})`,
        { cause: error },
      );
    }
    await setSubscriptionId(db, candidate.external_id, created, { feed });
    resubscribed += 1;
    progress.resubscribed = resubscribed;
    for (const old of candidate.old_subscriptions) {
      if (old === created) continue;
      try {
        await client.cancelSubscription(old);
      } catch (error) {
        if (!(error instanceof NotFoundError)) throw error;
      }
      cancelled += 1;
      progress.cancelled = cancelled;
    }
    log?.info({ external_id: candidate.external_id, subscription_id: created }, 'resync: re-subscribed with backfill');
  }
  return { feed, from: reset.from, version: reset.version, resubscribed, cancelled, terminal };
}

/** The feed's own local prescriptions: another feed's belong to another credential. */
export async function loadCandidates(db: Db, feed: string): Promise<{ candidates: Candidate[]; terminal: number }> {
  const n = namesOf(db);
  const rows = await queryRows<Record<string, unknown>>(
    db,
    sql`select p.external_id, p.status_rank, p.identity_key is null as identity_removed, p.patient_first_name, p.patient_last_name, p.patient_state, p.patient_dob,
          p.prescriber_npi, p.written_date, p.drug_ndc, p.erx_message_id,
          array_to_json(array_remove(array(
            select p.subscription_id union select distinct e.subscription_id from ${n.events} e where e.prescription_id = p.id
          ), null)) as old_subscriptions
        from ${n.prescriptions} p where p.feed = ${feed}::text order by p.external_id`,
  );
  const candidates: Candidate[] = [];
  let terminal = 0;
  for (const r of rows) {
    // an identity RETAIN_TERMINAL_IDENTITIES removed belongs to one that ended (a cancellation): nothing to re-subscribe
    if (Number(r.status_rank) >= TERMINAL_RANK || r.identity_removed === true) {
      terminal += 1;
      continue;
    }
    candidates.push({
      external_id: r.external_id as string,
      identity: identityFromRow(r),
      old_subscriptions: jsonColumn<string[] | null>(r.old_subscriptions) ?? [],
    });
  }
  return { candidates, terminal };
}
