import { sql } from 'drizzle-orm';
import type { Db } from '../../db/connection.js';
import type { StoreNames } from '../../db/store-names.js';
import type { Logger } from '../../log/log.js';
import { summarizeFailure } from '../state/failure-summary.js';
import type { FeedStop } from '../state/worker-snapshot.js';
import type { WorkerState } from '../state/worker-state.js';

/** The table's bounds (0026's CHECKs): a longer line is cut, never refused. */
export const FEED_STOP_REASON_MAX = 1000;
export const FEED_STOP_COMMAND_MAX = 300;

export interface FeedStopRecordOptions {
  state: WorkerState;
  db: Pick<Db, 'execute'>;
  names: StoreNames;
  feed: string;
  log: Logger;
}

/**
 * Keeps feed_stops (0026) in step with the feed's worker: a row with /readyz's line and the fixing
 * command while the feed is stopped for something a person must fix, none once it consumes again,
 * so the console (which cannot reach the worker) says why a feed stopped. Writes are chained in
 * order and a failed one is logged, never thrown: the record must not stop the feed it describes.
 * Returns the detach function, which waits for the last write.
 */
export function attachFeedStopRecord(options: FeedStopRecordOptions): () => Promise<void> {
  const { state, db, names, feed, log } = options;
  const table = names.qualified('feed_stops');
  let chain: Promise<void> = Promise.resolve();
  const write = (stop: FeedStop | null) => {
    const statement =
      stop === null
        ? sql`delete from ${table} where feed = ${feed}::text`
        : sql`insert into ${table} as s (feed, stopped_at, reason, command)
              values (${feed}::text, now(), ${stop.reason.slice(0, FEED_STOP_REASON_MAX)}::text,
                      ${stop.command === null ? null : stop.command.slice(0, FEED_STOP_COMMAND_MAX)}::text)
              on conflict (feed) do update set reason = excluded.reason, command = excluded.command,
                -- the same stop told again (a restarted worker finding it anew) keeps when it began
                stopped_at = case when s.reason = excluded.reason then s.stopped_at else excluded.stopped_at end`;
    chain = chain
      .then(() => db.execute(statement))
      .then(
        () => undefined,
        (error: unknown) =>
          log.warn({ error: summarizeFailure(error), stopped: stop !== null }, 'could not record the feed stop for the console'),
      );
  };
  const unsubscribe = state.subscribe({ stopChanged: write });
  return async () => {
    unsubscribe();
    await chain;
  };
}
