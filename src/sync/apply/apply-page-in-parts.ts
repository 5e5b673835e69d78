import { sql } from 'drizzle-orm';
import type { Db } from '../../db/connection.js';
import { inTransaction, type RunStatement } from '../../db/page-transaction.js';
import type { StoreNames } from '../../db/store-names.js';
import { sqlStateOf, isDataError } from './data-error.js';
import { CheckpointConflictError } from './errors/checkpoint-conflict-error.js';
import { digestOnlyJson, sha256Hex } from './event-bounds.js';
import { pageRowsJson } from './page-rows-json.js';
import { applyPageSql, matchLockSharedSql, type ApplyPageParams, type ApplyPageRow } from './page-statement.js';
import type { MalformedEvent, PreparedEvent, PreparedPage } from './prepared-page.js';

// Defence in depth behind the bounds (event-bounds.ts, limits.ts): when Postgres refuses the page
// statement for the data it carries (isDataError), retrying the page whole would fail forever. The page
// is applied again in ONE transaction, in parts behind savepoints: a part that fails is halved until
// the offending event is alone, and that event is quarantined `malformed` by its fingerprint (the
// value Postgres refused is not stored again). The position moves once, in the last statement, with
// the totals of every part: one transaction per page still holds, and a crash mid-way applies nothing.

/** A part of the page: a run of its well-formed events and of its malformed rows. */
interface Part {
  events: PreparedEvent[];
  malformed: MalformedEvent[];
}

/** What the parts applied, for the final statement and the page's result. */
export interface PartsTotals {
  inserted: number;
  matched: number;
  unmatched: number;
  ambiguous: number;
  unsupportedVersion: number;
  statusChanges: number;
  /** malformed rows stored by the parts (the page's own, not the offenders) */
  malformed: number;
  /** events and rows Postgres refused, quarantined by fingerprint */
  refused: number;
  /** of which well-formed events (the rest were malformed rows) */
  refusedEvents: number;
  /** SQLSTATEs of the refusals, for the log */
  states: string[];
}

export type PageParamsBase = Omit<ApplyPageParams, 'eventsJson' | 'malformedJson' | 'malformedCount' | 'split'>;

/** The stand-in quarantine row of a refused event or row: its fingerprint and size, the SQLSTATE, nothing of the value. */
function refusedRow(rawJson: string, state: string): MalformedEvent {
  return {
    key: `sha256:${sha256Hex(rawJson)}`,
    eventId: null,
    detail: `(event): Postgres refused it (SQLSTATE ${state}); kept by fingerprint only`,
    rawJson: digestOnlyJson(rawJson, `refused by Postgres (SQLSTATE ${state})`),
  };
}

function halves(part: Part): [Part, Part] {
  // the events keep their order across the halves (statuses only move forward either way)
  if (part.events.length + part.malformed.length < 2) throw new Error('a single row cannot be split');
  if (part.events.length === 0) {
    const mid = part.malformed.length >> 1;
    return [
      { events: [], malformed: part.malformed.slice(0, mid) },
      { events: [], malformed: part.malformed.slice(mid) },
    ];
  }
  if (part.events.length === 1)
    return [
      { events: part.events, malformed: [] },
      { events: [], malformed: part.malformed },
    ];
  const mid = part.events.length >> 1;
  return [
    { events: part.events.slice(0, mid), malformed: part.malformed },
    { events: part.events.slice(mid), malformed: [] },
  ];
}

/**
 * Applies `page` in parts within one transaction (see above). Throws CheckpointConflictError when the
 * position moved, and any error that is not the data's fault. Returns the final statement's row and
 * what the parts did.
 */
export async function applyPageInParts(
  db: Db,
  names: StoreNames,
  base: PageParamsBase,
  page: Pick<PreparedPage, 'events' | 'malformed'>,
): Promise<{ row: ApplyPageRow; totals: PartsTotals }> {
  return inTransaction(db, async (run) => {
    await run(matchLockSharedSql(names, base.feed));
    const totals: PartsTotals = {
      inserted: 0,
      matched: 0,
      unmatched: 0,
      ambiguous: 0,
      unsupportedVersion: 0,
      statusChanges: 0,
      malformed: 0,
      refused: 0,
      refusedEvents: 0,
      states: [],
    };
    const refused: MalformedEvent[] = [];
    const applyPart = async (part: Part): Promise<void> => {
      if (part.events.length + part.malformed.length === 0) return;
      const outcome = await tryPart(run, names, base, part);
      if ('row' in outcome) {
        const { row } = outcome;
        if (row.version === null) throw new CheckpointConflictError(base.feed, base.expectedVersion);
        totals.inserted += row.inserted;
        totals.matched += row.matched;
        totals.unmatched += row.unmatched;
        totals.ambiguous += row.ambiguous;
        totals.unsupportedVersion += row.unsupported_version;
        totals.statusChanges += row.status_changes;
        totals.malformed += part.malformed.length;
        return;
      }
      if (part.events.length + part.malformed.length === 1) {
        const single = part.events[0]?.rawJson ?? (part.malformed[0] as MalformedEvent).rawJson;
        refused.push(refusedRow(single, outcome.state));
        totals.refused++;
        if (part.events.length === 1) totals.refusedEvents++;
        if (!totals.states.includes(outcome.state)) totals.states.push(outcome.state);
        return;
      }
      const [first, second] = halves(part);
      await applyPart(first);
      await applyPart(second);
    };
    await applyPart({ events: page.events, malformed: page.malformed });
    const rowsJson = pageRowsJson({ events: [], malformed: refused });
    const carried = {
      inserted: totals.inserted,
      quarantined: totals.unmatched + totals.ambiguous + totals.unsupportedVersion + totals.malformed,
    };
    const [row] = await run<ApplyPageRow>(
      applyPageSql(names, {
        ...base,
        eventsJson: rowsJson.events,
        malformedJson: rowsJson.malformed,
        malformedCount: refused.length,
        split: { part: false, carried },
      }),
    );
    if (!row || row.version === null) throw new CheckpointConflictError(base.feed, base.expectedVersion);
    return { row, totals };
  });
}

/** One part behind a savepoint: its row, or the SQLSTATE Postgres refused it with (rolled back to the savepoint). */
async function tryPart(
  run: RunStatement,
  names: StoreNames,
  base: PageParamsBase,
  part: Part,
): Promise<{ row: ApplyPageRow } | { state: string }> {
  const rowsJson = pageRowsJson(part);
  await run(sql`savepoint page_part`);
  try {
    const [row] = await run<ApplyPageRow>(
      applyPageSql(names, {
        ...base,
        eventsJson: rowsJson.events,
        malformedJson: rowsJson.malformed,
        malformedCount: part.malformed.length,
        split: { part: true },
      }),
    );
    await run(sql`release savepoint page_part`);
    if (!row) throw new Error('the page statement returned no row');
    return { row };
  } catch (error) {
    if (!isDataError(error)) throw error;
    await run(sql`rollback to savepoint page_part`);
    return { state: sqlStateOf(error) as string };
  }
}
