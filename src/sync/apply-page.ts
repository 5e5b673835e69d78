import { performance } from 'node:perf_hooks';
import type { Db } from '../db/connection.js';
import { casCheckpointSql, matchPageSql, writePageSql } from './apply-page-sql.js';
import { CheckpointConflictError } from './errors/checkpoint-conflict-error.js';
import { decideMatch, type MatchOutcome } from './match.js';
import { candidateIds } from './match-sql.js';
import { inTransaction, type RunStatement } from './page-transaction.js';
import { preparePage, type MalformedEvent, type PreparedEvent, type PreparedPage } from './prepare-page.js';

export interface ApplyPageInput {
  feed: string;
  /** checkpoint version this worker read; the page applies only if it is still current */
  expectedVersion: number;
  /** where the feed continues after this page */
  nextIterator: string;
  /** the page's events exactly as received */
  events: unknown[];
  /**
   * preparePage(events), when the caller already ran it: validating page N+1 while
   * page N's statements are in flight takes validation off the critical path
   */
  prepared?: PreparedPage;
  receivedAt?: Date;
}

export interface ApplyResult {
  /** the checkpoint version after this page */
  version: number;
  received: number;
  inserted: number;
  /** well-formed events already in history or repeated in the page: nothing re-applied */
  duplicates: number;
  statusChanges: number;
  matched: number;
  quarantined: { malformed: number; unmatched: number; ambiguous: number };
  /** validate is 0 when the page came prepared; match includes the checkpoint compare-and-set pipelined with it */
  timingsMs: { validate: number; match: number; write: number; commit: number };
}

/** At most this many candidate external ids are named in an ambiguous finding. */
const AMBIGUOUS_IDS_SHOWN = 5;

interface Finding {
  reason: 'unmatched' | 'ambiguous';
  detail: string;
}

function finding(outcome: MatchOutcome, externalIds: readonly string[]): Finding | null {
  if (outcome.kind === 'matched') return null;
  if (outcome.kind === 'unmatched') return { reason: 'unmatched', detail: 'no local prescription matches its identity' };
  const named = externalIds.slice(0, AMBIGUOUS_IDS_SHOWN).join(', ');
  const more = externalIds.length > AMBIGUOUS_IDS_SHOWN ? ', ...' : '';
  return { reason: 'ambiguous', detail: `${outcome.ids.length} local prescriptions match (external_id ${named}${more})` };
}

function eventRowJson(event: PreparedEvent, outcome: MatchOutcome, externalIds: readonly string[]): string {
  const found = finding(outcome, externalIds);
  const head = JSON.stringify({
    id: event.id,
    name: event.name,
    occurred_at: event.occurredAt,
    subscription_id: event.subscriptionId,
    api_version: event.apiVersion,
    identity_key: event.key,
    erx_message_id: event.erx,
    status_rank: event.rank,
    prescription_id: outcome.kind === 'matched' ? outcome.id : null,
    quarantine_reason: found?.reason ?? null,
    quarantine_detail: found?.detail ?? null,
  });
  // the raw event is spliced in as already-serialised JSON: a 1 MB payload is stringified once
  return `${head.slice(0, -1)},"raw":${event.rawJson}}`;
}

function malformedRowJson(m: MalformedEvent): string {
  const head = JSON.stringify({ key: m.key, event_id: m.eventId, detail: m.detail });
  return `${head.slice(0, -1)},"raw":${m.rawJson}}`;
}

/** Matches the page's events in one statement; returns each event's row JSON for the write. */
async function matchEvents(run: RunStatement, events: readonly PreparedEvent[]): Promise<string[]> {
  if (events.length === 0) return [];
  const matchJson = JSON.stringify(events.map((e) => ({ id: e.id, identity_key: e.key, erx_message_id: e.erx })));
  const candidates = await run<{ id: string; ids: string[] | null; external_ids: string[] | null }>(matchPageSql(matchJson));
  const byId = new Map(candidates.map((row) => [row.id, row]));
  return events.map((event) => {
    const row = byId.get(event.id);
    return eventRowJson(event, decideMatch(candidateIds(row?.ids)), row?.external_ids ?? []);
  });
}

/**
 * Applies one page in ONE transaction: checkpoint compare-and-set first (throws
 * CheckpointConflictError and applies nothing when the version moved), then events,
 * matches, statuses and quarantine, with a constant number of statements.
 */
export async function applyPage(db: Db, input: ApplyPageInput): Promise<ApplyResult> {
  const receivedAt = (input.receivedAt ?? new Date()).toISOString();
  const t0 = performance.now();
  const page = input.prepared ?? preparePage(input.events);
  const malformedJson = `[${page.malformed.map(malformedRowJson).join(',')}]`;
  const t1 = performance.now();
  let matchMs = 0;
  let bodyEnd = 0;

  const outcome = await inTransaction(db, async (run) => {
    const m0 = performance.now();
    // pipelined on one connection: the match runs after the compare-and-set (and its lock) in
    // statement order, but costs no extra round trip; on a conflict its read-only result is dropped
    const [cas, rows] = await Promise.all([
      run<{ version: unknown }>(casCheckpointSql(input.feed, input.expectedVersion, input.nextIterator)),
      matchEvents(run, page.events),
    ]);
    if (cas.length === 0) throw new CheckpointConflictError(input.feed, input.expectedVersion);
    const version = Number(cas[0]?.version);
    const s0 = performance.now();
    matchMs = s0 - m0;
    if (page.events.length === 0 && page.malformed.length === 0) {
      bodyEnd = s0;
      return { version, writeMs: 0, counts: undefined };
    }
    const [counts] = await run<{ inserted: number; matched: number; unmatched: number; ambiguous: number; status_changes: number }>(
      writePageSql({
        feed: input.feed,
        receivedAt,
        eventsJson: `[${rows.join(',')}]`,
        malformedJson,
        malformedCount: page.malformed.length,
      }),
    );
    bodyEnd = performance.now();
    return { version, writeMs: bodyEnd - s0, counts };
  });
  const committed = performance.now();

  const inserted = outcome.counts?.inserted ?? 0;
  return {
    version: outcome.version,
    received: input.events.length,
    inserted,
    duplicates: page.events.length - inserted + page.duplicatesInPage,
    statusChanges: outcome.counts?.status_changes ?? 0,
    matched: outcome.counts?.matched ?? 0,
    quarantined: {
      malformed: page.malformed.length,
      unmatched: outcome.counts?.unmatched ?? 0,
      ambiguous: outcome.counts?.ambiguous ?? 0,
    },
    timingsMs: { validate: input.prepared ? 0 : t1 - t0, match: matchMs, write: outcome.writeMs, commit: committed - bodyEnd },
  };
}
