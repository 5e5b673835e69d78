import { withDeadline } from '../db/deadline.js';
import { createPostgresClient } from '../db/postgres-client.js';
import { DEFAULT_SCHEMA } from '../db/schema-name.js';
import { storeNames } from '../db/store-names.js';
import { abortableSleep } from '../lib/abortable-sleep.js';
import { fullJitterDelay, type BackoffPolicy } from '../lib/backoff.js';
import { asCursorExpired } from './errors/cursor-expired-error.js';
import { FollowerSessionLostError } from './errors/follower-session-lost-error.js';
import { isRetryableFollowError } from './follow-retry.js';
import { statusChannel } from './status-channel.js';
import { toStatusChange, type StatusChange } from './status-change.js';
import { listenForStatusChanges, statusChangesSince } from '../store-api/changes/status-changes-since.js';
import { runnerOfSql } from '../store-api/runner.js';
import { Wakeup } from '../lib/wakeup.js';

export interface FollowStatusChangesOptions {
  /** postgres:// URL of the vendor's database; libpq's sslmode, sslrootcert, sslcert and sslkey apply (docs/operations.md) */
  url: string;
  /** CA bundle file for a URL without sslrootcert (what DATABASE_CA_FILE is for the daemon) */
  caFile?: string | undefined;
  /** the deployment's schema (DATABASE_SCHEMA); default intake_sync */
  schema?: string | undefined;
  /** resume after this cursor; null or absent: from the first change ever recorded */
  since?: string | null | undefined;
  /** ends the iteration (cleanly: the iterator returns) */
  signal?: AbortSignal | undefined;
  /** rows per status_changes_since() call (1..10000); default 500 */
  batchSize?: number | undefined;
  /** read even when no notification came (notifications are only a hint); default 5000 ms */
  pollIntervalMs?: number | undefined;
  /** reconnect backoff (full jitter); default 200 ms doubling up to 10 s */
  backoff?: BackoffPolicy | undefined;
  /** a read with no answer within this is abandoned with its connection; default 30 s */
  queryTimeoutMs?: number | undefined;
  /** pg_stat_activity.application_name of the follower's connection */
  applicationName?: string | undefined;
  /** told about each reconnect (for logging: the error carries no row data) */
  onReconnect?: ((event: { attempt: number; delayMs: number; error: unknown }) => void) | undefined;
  random?: (() => number) | undefined;
}

const DEFAULT_BACKOFF: BackoffPolicy = { baseMs: 200, capMs: 10_000 };

/**
 * Yields status changes in commit order, from `since` on, forever (until `signal` aborts or the
 * consumer stops). LISTENs on the deployment's channel as a wake-up and reads anyway every
 * `pollIntervalMs`: the table is the truth. A lost connection is reopened with backoff and the
 * read resumes after the last change yielded, so nothing is skipped or repeated within one
 * iteration; across restarts of the consumer, delivery is at-least-once unless it stores the
 * cursor with its own work. Errors reconnecting cannot fix (not migrated, no permission, bad
 * cursor, refused login) end the iteration by throwing; a cursor older than what retention kept
 * (RETAIN_STATUS_CHANGES) throws CursorExpiredError, never skips. A follower that keeps up never sees it.
 */
export async function* followStatusChanges(options: FollowStatusChangesOptions): AsyncGenerator<StatusChange, void, undefined> {
  const names = storeNames(options.schema ?? DEFAULT_SCHEMA);
  const batchSize = options.batchSize ?? 500;
  const pollIntervalMs = options.pollIntervalMs ?? 5_000;
  const { signal } = options;
  let cursor = options.since ?? null;
  let failures = 0;
  while (!signal?.aborted) {
    const session = openSession(options, statusChannel(names.schema));
    try {
      await session.listen();
      for (;;) {
        if (session.lost) throw new FollowerSessionLostError();
        // cleared before the read: a notification for a commit the read misses wakes the next wait
        session.wakeup.clear();
        const rows = await session.read(names.schema, cursor, batchSize);
        failures = 0;
        for (const row of rows) {
          cursor = row.cursor;
          yield row;
        }
        if (rows.length === batchSize) continue;
        await session.wakeup.wait(pollIntervalMs, signal);
        if (signal?.aborted) return;
      }
    } catch (error) {
      if (signal?.aborted) return;
      if (!isRetryableFollowError(error)) throw asCursorExpired(error, cursor);
      const delayMs = fullJitterDelay(failures, options.backoff ?? DEFAULT_BACKOFF, options.random ?? Math.random);
      failures += 1;
      options.onReconnect?.({ attempt: failures, delayMs, error });
      try {
        await abortableSleep(delayMs, signal);
      } catch {
        return;
      }
    } finally {
      await session.close();
    }
  }
}

interface Session {
  wakeup: Wakeup;
  /** the connection closed: LISTEN is gone with it, so the session must be rebuilt */
  readonly lost: boolean;
  listen(): Promise<void>;
  read(schema: string, cursor: string | null, maxRows: number): Promise<StatusChange[]>;
  close(): Promise<void>;
}

/**
 * One connection (max 1) that both LISTENs and reads. postgres.js would silently reopen a closed
 * connection for the next query, without the LISTEN: `onclose` marks the session lost instead,
 * and the follower starts a new one (and reads, which covers notifications missed meanwhile).
 */
function openSession(options: FollowStatusChangesOptions, channel: string): Session {
  const wakeup = new Wakeup();
  let lost = false;
  let closing = false;
  const client = createPostgresClient(
    options.url,
    {
      max: 1,
      // an idle or aged-out connection would take the LISTEN with it
      idle_timeout: 0,
      max_lifetime: null,
      fetch_types: false,
      connect_timeout: 10,
      onnotice: () => {},
      connection: { application_name: options.applicationName ?? 'intake-sync change follower' },
      ...notificationHandler((name) => {
        if (name === channel) wakeup.wake();
      }),
      onclose: () => {
        if (closing) return;
        lost = true;
        wakeup.wake();
      },
    },
    { variable: 'url', caFile: options.caFile },
  );
  const timeoutMs = options.queryTimeoutMs ?? 30_000;
  return {
    wakeup,
    get lost() {
      return lost;
    },
    async listen() {
      await withDeadline(listenForStatusChanges(runnerOfSql(client, DEFAULT_SCHEMA), channel), timeoutMs, 'LISTEN for status changes');
    },
    async read(schema, cursor, maxRows) {
      const query = statusChangesSince(runnerOfSql(client, schema), cursor, maxRows, { prepare: true });
      const rows = await withDeadline(query, timeoutMs, 'reading status changes');
      return rows.map((row) => toStatusChange(row));
    },
    async close() {
      closing = true;
      await client.end({ timeout: 0 }).catch(() => {});
    },
  };
}

/**
 * postgres.js calls `onnotify(channel, payload)` for every NotificationResponse on a connection
 * of the client (connection.js); its typings omit the option, used here instead of sql.listen(),
 * whose dedicated connection re-LISTENs once after a loss and gives up silently if that fails.
 */
function notificationHandler(onnotify: (channel: string, payload: string) => void): Record<string, never> {
  return { onnotify } as unknown as Record<string, never>;
}
