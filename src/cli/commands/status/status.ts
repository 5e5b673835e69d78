import { listFeedSources } from '../../../sync/version-migration/feed-sources.js';
import { terminalSafe, terminalSafeJson } from '../../../lib/terminal-text.js';
import { countMigrationStates } from '../../../operations/version-migration/migration-rows.js';
import type { QuarantineReason } from '../../../store-api/triage/vocabulary.js';
import { checkpointFacts, eventCount, prescriptionsByStatus, recordedStop } from '../../../store-api/feeds/feed-store-facts.js';
import { openFindingsByReason } from '../../../store-api/triage/open-findings-by-reason.js';
import type { Command } from 'commander';
import { type Config, loadConfig } from '../../../config/config.js';
import type { Database } from '../../../db/connection.js';
import { leaseHolder, type LeaseHolder } from '../../../sync/leadership/lease.js';
import { parseLeaseApplicationName } from '../../../sync/leadership/lease-holder-name.js';
import { probeLag, type StatusLag } from './lag.js';
import { noOperatorLagDetail } from './no-operator.js';
import { statusLagClient } from './lag-client.js';
import { readOutboxStats } from '../../../store-api/outbox/outbox-stats.js';
import { describeCursorProblem, resetToBlame } from '../../../sync/state/cursor-problem.js';
import { latestCheckpointReset } from '../../../sync/poll/checkpoint.js';
import { resolveFeeds } from '../../../config/feeds-file.js';
import { CliUsageError } from '../../context/errors.js';
import { commandFeed, withFeedOption } from '../../context/feed-context.js';
import { openStoreFromConfig } from '../../context/store-context.js';

/** What `status` reports: counts and identifiers from the database, never PHI. */
export interface StoreStatus {
  feed: string;
  checkpoint: {
    iterator: string | null;
    version: number;
    updated_at: string;
    age_seconds: number;
    pages_applied: number;
    events_applied: number;
    events_quarantined: number;
  } | null;
  /** open quarantine entries by reason */
  quarantine: Record<QuarantineReason, number>;
  /**
   * null on embedded PGlite, where there is only ever this process. `pid` and `host` are the holding
   * daemon's (from its lease session's application_name; null when the URL set its own name),
   * `backend_pid` the Postgres backend holding the lock
   */
  leader: { held: boolean; pid: number | null; host: string | null; backend_pid: number | null; client_addr: string | null } | null;
  /** how far behind the operator the store is (asked at the operator: GET /events at the stored position, limit 1) */
  lag?: StatusLag;
  /**
   * null, or why the daemon has stopped consuming this feed, in /readyz's words and with its command:
   * the operator refuses the stored position (expired, or a mistyped `checkpoint reset`)
   */
  stopped?: string | null;
  prescriptions: { total: number; by_status: Record<string, number> };
  events: number;
  /** rows waiting to be delivered to the operator (send_prescription / cancel_prescription) */
  outbox: { pending: number; oldest_pending_age_seconds: number };
  /** after an API version migration: the feed's operator sources (absent for a feed that never migrated) */
  sources?: Array<{
    base_url: string;
    api_version: string;
    state: string;
    migration_completed_at: string | null;
    retired_at: string | null;
  }>;
  /**
   * while a source drains: `subscriptions migrate` progress toward the current source's version, rows by
   * state; `awaiting_old_subscription` ones are finished by a rerun once their first old-version event came
   */
  migration?: { target_version: string; by_state: Record<string, number>; awaiting_old_subscription: number };
}

/** Registers `intake-sync status [--feed NAME | --all-feeds] [--json]`. */
export function registerStatusCommand(program: Command): void {
  withFeedOption(program.command('status'))
    .description('show the feed checkpoint, quarantine, lease holder, prescriptions by status and the outbox backlog')
    .option('--all-feeds', 'every configured feed, one block each (JSON: {"feeds": [...]})')
    .option('--json', 'print one JSON object')
    .action(async (options: { feed?: string; allFeeds?: boolean; json?: boolean }) => {
      const config = loadConfig();
      if (options.allFeeds && options.feed !== undefined) throw new CliUsageError('--all-feeds and --feed: give one of them');
      // resolved before the store is opened: an unknown --feed is refused without touching it
      const feeds = options.allFeeds ? resolveFeeds(config).map((f) => f.name) : [commandFeed(config, options.feed).name];
      const database = await openStoreFromConfig(config);
      try {
        const now = Date.now();
        const statuses: StoreStatus[] = [];
        for (const feed of feeds) {
          const status = await readStoreStatus(database, feed, now);
          const iterator = status.checkpoint?.iterator ?? null;
          status.lag = await feedLag(config, feed, database, iterator);
          status.stopped = await stoppedReason(database, feed, iterator, status.lag);
          statuses.push(status);
        }
        process.stdout.write(`${formatStatuses(statuses, { json: options.json ?? false, allFeeds: options.allFeeds ?? false })}\n`);
      } finally {
        await database.close();
      }
    });
}

/** The feed's lag, asked at its current source; unknown without a configured operator. */
async function feedLag(config: Config, feed: string, database: Database, iterator: string | null): Promise<StatusLag> {
  const client = await statusLagClient(config, feed, database.db);
  if (!client) return { seconds: null, caught_up: null, detail: noOperatorLagDetail(config, feed) };
  return probeLag(client, iterator, Date.now);
}

/** The line /readyz gives a feed stopped on its position (describeCursorProblem, with the reset to undo when one set it). */
async function stoppedReason(database: Database, feed: string, iterator: string | null, lag: StatusLag): Promise<string | null> {
  // else what the leading worker recorded (feed_stops): a stop, or pages blocked on a lock with its holder (issue 33)
  if (!lag.cursorProblem) return recordedStop(database.db, feed);
  const reset = iterator === null ? null : resetToBlame(iterator, await latestCheckpointReset(database.db, feed));
  return describeCursorProblem(feed, lag.cursorProblem, { at: iterator, reset });
}

/** One feed prints as before (one object); --all-feeds wraps them, so the one-feed shape never changes. */
function formatStatuses(statuses: StoreStatus[], options: { json: boolean; allFeeds: boolean }): string {
  if (options.json) return terminalSafeJson(JSON.stringify(options.allFeeds ? { feeds: statuses } : statuses[0]));
  return statuses.map(statusText).join('\n\n');
}

/** Reads the status facts of one feed from the store. */
export async function readStoreStatus(database: Database, feed: string, now: number): Promise<StoreStatus> {
  const { db } = database;
  const checkpoint = await checkpointFacts(db, feed);
  const quarantine = await openFindingsByReason(db, feed);
  const byStatus = await prescriptionsByStatus(db, feed);
  const events = await eventCount(db, feed);
  const holder = database.kind === 'postgres' ? await leaseHolder(database, feed) : undefined;
  const outbox = await readOutboxStats(db, feed);
  const sources = await listFeedSources(db, feed);
  const current = sources.find((s) => s.state === 'current');
  const draining = sources.some((s) => s.state === 'draining');
  const byState = current && draining ? await countMigrationStates(db, feed, current.apiVersion) : undefined;

  return {
    feed,
    checkpoint: checkpoint
      ? {
          iterator: checkpoint.iterator,
          version: checkpoint.version,
          updated_at: checkpoint.updated_at.toISOString(),
          age_seconds: Math.max(0, Math.round((now - checkpoint.updated_at.getTime()) / 1000)),
          pages_applied: checkpoint.pages_applied,
          events_applied: checkpoint.events_applied,
          events_quarantined: checkpoint.events_quarantined,
        }
      : null,
    quarantine,
    leader: holder === undefined ? null : leaderOf(holder),
    prescriptions: { total: Object.values(byStatus).reduce((a, b) => a + b, 0), by_status: byStatus },
    events,
    outbox: { pending: outbox.pending, oldest_pending_age_seconds: outbox.oldestPendingAgeSeconds },
    ...(sources.length > 0
      ? {
          sources: sources.map((s) => ({
            base_url: s.baseUrl,
            api_version: s.apiVersion,
            state: s.state,
            migration_completed_at: s.migrationCompletedAt?.toISOString() ?? null,
            retired_at: s.retiredAt?.toISOString() ?? null,
          })),
        }
      : {}),
    ...(current && byState
      ? {
          migration: {
            target_version: current.apiVersion,
            by_state: byState as Record<string, number>,
            awaiting_old_subscription: byState.awaiting_old_subscription ?? 0,
          },
        }
      : {}),
  };
}

function leaderOf(holder: LeaseHolder | null): NonNullable<StoreStatus['leader']> {
  const daemon = parseLeaseApplicationName(holder?.applicationName);
  return {
    held: holder !== null,
    pid: daemon?.pid ?? null,
    host: daemon?.host ?? null,
    backend_pid: holder?.pid ?? null,
    client_addr: holder?.clientAddr ?? null,
  };
}

function leaderText(leader: StoreStatus['leader']): string {
  if (leader === null) return 'embedded (single process)';
  if (!leader.held) return 'nobody holds the lease';
  const where = leader.host ?? leader.client_addr ?? 'an unknown host';
  const backend = `Postgres backend ${leader.backend_pid}`;
  return leader.pid === null
    ? `held by a process on ${where} (${backend}; its application_name is its own, so no daemon pid)`
    : `held by intake-sync pid ${leader.pid} on ${where} (${backend})`;
}

function lagText(lag: StatusLag | undefined): string | undefined {
  if (!lag) return undefined;
  if (lag.caught_up) return 'lag             caught up';
  if (lag.seconds !== null) return `lag             ${lag.seconds}s (the oldest unapplied event occurred ${lag.seconds}s ago)`;
  return `lag             ${lag.detail}`;
}

function findingsText(q: StoreStatus['quarantine']): string {
  const open = Object.entries(q).filter(([, count]) => count > 0);
  const total = open.reduce((sum, [, count]) => sum + count, 0);
  if (total === 0) return 'quarantine      no open findings';
  return `quarantine      ${total} open finding(s): ${open.map(([reason, count]) => `${reason} ${count}`).join(', ')} (intake-sync quarantine list)`;
}

function migrationText(m: NonNullable<StoreStatus['migration']>): string {
  const states = Object.entries(m.by_state)
    .map(([state, count]) => `${state} ${count}`)
    .join(', ');
  return (
    `migration       to ${m.target_version}: ${states || 'no prescriptions'}` +
    (m.awaiting_old_subscription > 0
      ? `; ${m.awaiting_old_subscription} await their old subscription: rerun 'subscriptions migrate' once their first event arrived (--release-awaiting for those that never had one)`
      : '')
  );
}

function statusText(status: StoreStatus): string {
  const c = status.checkpoint;
  const statuses = Object.entries(status.prescriptions.by_status)
    .map(([name, count]) => `${name} ${count}`)
    .join(', ');
  return (
    [
      `feed            ${status.feed}`,
      c
        ? `checkpoint      version ${c.version}, iterator ${c.iterator ?? '(beginning)'}, moved ${c.age_seconds}s ago`
        : 'checkpoint      none yet (the worker has not run)',
      status.stopped ? `state           ${status.stopped}` : undefined,
      c ? `applied         ${c.pages_applied} pages, ${c.events_applied} events, ${c.events_quarantined} quarantined` : undefined,
      lagText(status.lag),
      `events          ${status.events} in history`,
      findingsText(status.quarantine),
      `lease           ${leaderText(status.leader)}`,
      `prescriptions   ${status.prescriptions.total}${statuses ? ` (${statuses})` : ''}`,
      ...(status.sources ?? []).map((s) => `source          ${s.api_version} ${s.state} ${s.base_url}`),
      status.migration ? migrationText(status.migration) : undefined,
      `outbox          ${status.outbox.pending} pending${status.outbox.pending > 0 ? `, oldest ${status.outbox.oldest_pending_age_seconds}s` : ''}`,
    ]
      .filter((line) => line !== undefined)
      // one element per line: a newline or escape inside one came from stored text (an application_name, an iterator)
      .map(terminalSafe)
      .join('\n')
  );
}
