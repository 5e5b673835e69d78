import { sql, type SQL } from 'drizzle-orm';
import { queryRows, type Db } from '../../db/connection.js';
import { attributionOf } from '../../db/audit.js';
import { namesOf } from '../../db/store-names.js';
import { FeedPauseRefusedError } from './errors/feed-pause-refused-error.js';

/** A feed paused by a person (feed_pauses, 0027). */
export interface FeedPause {
  reason: string;
  pausedBy: string;
  pausedAt: string;
}

// what pause_feed/resume_feed refuse with (sql/api/feeds/); anything else is a failure
const REFUSALS = new Set(['23502', '22023', '42704']);

function serverCode(error: unknown): { code: string; message: string } | undefined {
  for (let current: unknown = error, depth = 0; current instanceof Error && depth < 5; current = current.cause, depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return { code, message: current.message };
  }
  return undefined;
}

async function pauseCall(db: Db, actor: string, call: SQL): Promise<boolean> {
  try {
    return await db.transaction(async (tx) => {
      await tx.execute(sql`select set_config('intake_sync.actor', ${attributionOf(actor)}, true)`);
      const [row] = await queryRows<{ changed: boolean }>(tx, call);
      return row?.changed === true;
    });
  } catch (error) {
    const server = serverCode(error);
    if (server && REFUSALS.has(server.code)) throw new FeedPauseRefusedError(server.message, server.code, { cause: error });
    throw error;
  }
}

/** pause_feed(): pauses `feed` for every replica, audited as feed.pause. True when it was not paused before. */
export function pauseFeed(db: Db, feed: string, reason: string, actor: string): Promise<boolean> {
  return pauseCall(db, actor, sql`select ${namesOf(db).qualified('pause_feed')}(${feed}::text, ${reason}::text) as changed`);
}

/** resume_feed(): ends the pause, audited as feed.resume. True when the feed was paused. */
export function resumeFeed(db: Db, feed: string, actor: string): Promise<boolean> {
  return pauseCall(db, actor, sql`select ${namesOf(db).qualified('resume_feed')}(${feed}::text) as changed`);
}

/** Every paused feed of the deployment, by name. */
export async function readFeedPauses(db: Db): Promise<Map<string, FeedPause>> {
  const rows = await queryRows<{ feed: string; reason: string; paused_by: string; paused_at: string | Date }>(
    db,
    sql`select feed, reason, paused_by, paused_at from ${namesOf(db).qualified('feed_pauses')}`,
  );
  return new Map(rows.map((r) => [r.feed, { reason: r.reason, pausedBy: r.paused_by, pausedAt: new Date(r.paused_at).toISOString() }]));
}

/**
 * The pauses as this process last read them, shared by all its feeds' workers: read again when
 * older than `maxAgeMs` (one read however many feeds ask at once), so a pause is honoured within a
 * lease check of being written, at one statement per `maxAgeMs` per process. A failed read keeps
 * the last known pauses: a database outage neither pauses nor resumes a feed.
 */
export class FeedPauseBoard {
  private pauses = new Map<string, FeedPause>();
  private readAt = Number.NEGATIVE_INFINITY;
  private reading: Promise<void> | undefined;

  constructor(
    private readonly read: () => Promise<Map<string, FeedPause>>,
    private readonly maxAgeMs: number,
    private readonly now: () => number,
  ) {}

  /** The feed's pause, or null; from a read at most maxAgeMs old (when the database answers). */
  async pauseOf(feed: string): Promise<FeedPause | null> {
    if (this.now() - this.readAt >= this.maxAgeMs) await this.refresh();
    return this.pauses.get(feed) ?? null;
  }

  /** The pauses as last read (metrics read this at scrape time). */
  known(): ReadonlyMap<string, FeedPause> {
    return this.pauses;
  }

  /** Reads the pauses now (joining a read under way). */
  refresh(): Promise<void> {
    this.reading ??= this.read()
      .then((pauses) => {
        this.pauses = pauses;
        this.readAt = this.now();
      })
      .catch(() => {
        // keep the last known; try again at the next ask, not before maxAgeMs (no read storm in an outage)
        this.readAt = this.now();
      })
      .finally(() => {
        this.reading = undefined;
      });
    return this.reading;
  }
}
