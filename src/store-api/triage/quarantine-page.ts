import { qualified, type RunnerSource, runnerOf } from '../runner.js';

/** The filter quarantine_page, quarantine_count and dismiss_matching share (_quarantine_filter, sql/api/triage/). */
export interface FilterArguments {
  feed: string | null;
  /** a finding reason (vocabulary.ts) */
  reason: string | null;
  eventName: string | null;
  /** only findings held since before this instant, ISO text */
  heldBefore: string | null;
  /** an event id, a subscription id or a prescription's external_id */
  search: string | null;
}

/** Every filter argument null: every open finding the role may see. */
export const NO_FILTER: FilterArguments = { feed: null, reason: null, eventName: null, heldBefore: null, search: null };

const filterParams = (f: FilterArguments) => [f.feed, f.reason, f.eventName, f.heldBefore, f.search];

/** One open finding as the quarantine list shows it (no PHI: identifiers and the SQL's detail). */
export interface OpenFinding {
  feed: string;
  event_id: string | null;
  reason: string;
  event_name: string | null;
  held_since: Date;
  /** held_since to the microsecond, as text: a page position (a JS Date would cut the microseconds) */
  held_since_key: string;
  detail: string;
  seen_count: number;
  quarantine_key: string;
  subscription_id: string | null;
}

/** The columns of an OpenFinding from quarantine_page as `q`. */
const FINDING_COLUMNS = `q.feed, q.event_id, q.reason, q.event_name, q.held_since,
  to_char(q.held_since at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as held_since_key,
  q.detail, q.seen_count, q.quarantine_key, q.subscription_id`;

/** A page position: a row's (held_since, feed, quarantine_key). */
export interface PagePosition {
  heldSince: string;
  feed: string;
  key: string;
}

/** The finding reasons as the SQL that owns them lists them (quarantine_reasons()), in its order. */
export async function findingReasons(source: RunnerSource): Promise<string[]> {
  const runner = runnerOf(source);
  // one row each (a user's connection does not fetch array types, so a text[] would come back as its text)
  const rows = await runner.query<{ reason: string }>(
    `select r.reason from unnest(${qualified(runner, 'quarantine_reasons')}()) with ordinality as r(reason, n) order by r.n`,
  );
  return rows.map((r) => r.reason);
}

/**
 * quarantine_page(): up to `limit` open findings matching the filter after (or, backward, before)
 * a position; it filters, orders and pages inside, every value a bound parameter. The position's
 * time goes as text: a timestamptz parameter is sent through a JS Date by postgres.js, which cuts
 * the microseconds.
 */
export async function quarantinePage(
  source: RunnerSource,
  filter: FilterArguments,
  position: PagePosition | undefined,
  limit: number,
  backward: boolean,
): Promise<OpenFinding[]> {
  const runner = runnerOf(source);
  return runner.query<OpenFinding>(
    `select ${FINDING_COLUMNS}
     from ${qualified(runner, 'quarantine_page')}($1, $2, $3, $4::timestamptz, $5, $6::text::timestamptz, $7, $8, $9, $10) q`,
    [...filterParams(filter), position?.heldSince ?? null, position?.feed ?? null, position?.key ?? null, limit, backward],
  );
}

/** The open findings of one subscription of a feed (quarantine_page with it as Search: index lookups), at most `limit`. */
export async function subscriptionFindings(
  source: RunnerSource,
  feed: string,
  subscription: string,
  limit: number,
): Promise<OpenFinding[]> {
  const runner = runnerOf(source);
  return runner.query<OpenFinding>(
    `select ${FINDING_COLUMNS}
     from ${qualified(runner, 'quarantine_page')}($1, null, null, null, $2, null, null, null, $3, false) q where q.subscription_id = $2`,
    [feed, subscription, limit],
  );
}

/**
 * quarantine_count(): how many open findings match, counted up to `atMost`, and the instant
 * (as_of) dismiss_matching takes to close exactly those counted; `atMost` null counts them all.
 */
export async function quarantineCount(
  source: RunnerSource,
  filter: FilterArguments,
  atMost: number | null,
): Promise<{ matching: number; asOf: string }> {
  const runner = runnerOf(source);
  const [row] = await runner.query<{ matching: string; as_of: string }>(
    `select matching, as_of from ${qualified(runner, 'quarantine_count')}($1, $2, $3, $4::timestamptz, $5, $6)`,
    [...filterParams(filter), atMost],
  );
  return { matching: Number(row?.matching ?? 0), asOf: String(row?.as_of ?? '0') };
}

/** One open finding of a feed by its quarantine key, through quarantine_open: undefined when the role cannot see it. */
export async function openFinding(source: RunnerSource, feed: string, key: string): Promise<OpenFinding | undefined> {
  const runner = runnerOf(source);
  const rows = await runner.query<OpenFinding>(
    `select q.* from ${qualified(runner, 'quarantine_open')} q where q.feed = $1 and q.quarantine_key = $2`,
    [feed, key],
  );
  return rows[0];
}

/**
 * dismiss_matching(): one batch of at most `batch` findings that match the filter and were counted
 * at `asOf`, closed as dismissed in its own transaction (each batch holds the feeds' match locks, so it
 * stays short). `leftOpen` is the number of matching findings that arrived after the count, given
 * once a batch closes fewer than `batch`.
 */
export async function dismissMatchingBatch(
  source: RunnerSource,
  filter: FilterArguments,
  asOf: string,
  reason: string,
  batch: number,
): Promise<{ dismissed: number; leftOpen: number }> {
  const runner = runnerOf(source);
  const [row] = await runner.transaction((tx) =>
    tx.query<{ dismissed: number; left_open: string | null }>(
      `select dismissed, left_open from ${qualified(tx, 'dismiss_matching')}($1, $2, $3, $4::timestamptz, $5, $6, $7, $8)`,
      [...filterParams(filter), asOf, reason, batch],
    ),
  );
  return { dismissed: row?.dismissed ?? 0, leftOpen: Number(row?.left_open ?? 0) };
}
