import { sql } from 'drizzle-orm';
import { queryRows, type Db } from '../../db/connection.js';
import { namesOf } from '../../db/store-names.js';

/** What `feeds list` says a feed is doing. */
export type FeedRosterState = 'running' | 'paused' | 'stopped' | 'retired' | 'no leader';

/** One feed of the deployment as `feeds list` shows it: identifiers, codes, counts and times only. */
export interface FeedRosterRow {
  feed: string;
  state: FeedRosterState;
  /** why: the pause's reason code, the stop's /readyz line, or null */
  why: string | null;
  /** the leading process (its lock session's application_name: pid and host), or null */
  leader: string | null;
  /** seconds since the newest applied event occurred at the operator; null before the first */
  lag_seconds: number | null;
  open_findings: number;
  paused_by: string | null;
  since: string | null;
}

/** A feed_overview row (sql/api/console/feed_overview.sql) with its leader's name, as the query returns it. */
export interface FeedOverviewFacts {
  feed: string;
  leader: string | null;
  leader_expires_at: string | null;
  last_event_occurred_at: string | null;
  open_findings: Record<string, number>;
  stopped_at: string | null;
  stop_reason: string | null;
  paused_at: string | null;
  pause_reason: string | null;
  paused_by: string | null;
  retired_at: string | null;
}

/**
 * Pure: a feed's state at `nowMs`. Retired first (no replica runs it, whatever else is recorded),
 * then paused (a person said so), then stopped (its worker said why), then whether a live lease
 * names a leader.
 */
export function rosterRow(facts: FeedOverviewFacts, nowMs: number): FeedRosterRow {
  const leaderLive = facts.leader_expires_at !== null && Date.parse(facts.leader_expires_at) > nowMs;
  const [state, why, since]: [FeedRosterState, string | null, string | null] =
    facts.retired_at !== null
      ? ['retired', null, facts.retired_at]
      : facts.paused_at !== null
        ? ['paused', facts.pause_reason, facts.paused_at]
        : facts.stopped_at !== null
          ? ['stopped', facts.stop_reason, facts.stopped_at]
          : leaderLive
            ? ['running', null, null]
            : ['no leader', null, null];
  const occurred = facts.last_event_occurred_at === null ? null : Date.parse(facts.last_event_occurred_at);
  return {
    feed: facts.feed,
    state,
    why,
    leader: leaderLive ? facts.leader : null,
    lag_seconds: occurred === null ? null : Math.max(0, Math.round((nowMs - occurred) / 1000)),
    open_findings: Object.values(facts.open_findings).reduce((sum, n) => sum + Number(n), 0),
    paused_by: state === 'paused' ? facts.paused_by : null,
    since,
  };
}

const iso = (v: unknown) => (v === null || v === undefined ? null : new Date(v as string | Date).toISOString());

/**
 * Every feed of the deployment (feed_overview) with its leading process's name, by feed name: the
 * feeds a run has claimed (origin set), not a name only registered (the `default` row of a
 * FEEDS_FILE deployment, a feed `migrate` recorded that no daemon ran yet).
 */
export async function listFeedRoster(db: Db, nowMs: number): Promise<FeedRosterRow[]> {
  const n = namesOf(db);
  const rows = await queryRows<Record<string, unknown>>(
    db,
    sql`select o.feed, a.application_name as leader, o.leader_expires_at, o.last_event_occurred_at, o.open_findings,
               o.stopped_at, o.stop_reason, o.paused_at, o.pause_reason, o.paused_by, o.retired_at
          from ${n.qualified('feed_overview')} o
          left join ${n.qualified('feed_leases')} l on l.feed = o.feed
          left join pg_catalog.pg_stat_activity a on a.pid = l.holder_pid
         where o.origin is not null
         order by o.feed`,
  );
  return rows.map((r) =>
    rosterRow(
      {
        feed: String(r.feed),
        leader: (r.leader as string | null) ?? null,
        leader_expires_at: iso(r.leader_expires_at),
        last_event_occurred_at: iso(r.last_event_occurred_at),
        // the driver may hand jsonb over as text
        open_findings: (typeof r.open_findings === 'string' ? JSON.parse(r.open_findings) : (r.open_findings ?? {})) as Record<
          string,
          number
        >,
        stopped_at: iso(r.stopped_at),
        stop_reason: (r.stop_reason as string | null) ?? null,
        paused_at: iso(r.paused_at),
        pause_reason: (r.pause_reason as string | null) ?? null,
        paused_by: (r.paused_by as string | null) ?? null,
        retired_at: iso(r.retired_at),
      },
      nowMs,
    ),
  );
}
