import type { SQL } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import type postgres from 'postgres';
import { queryRows, type Db } from './connection.js';
import { isConnectionLoss } from './connection-loss.js';
import { withDeadline } from './deadline.js';
import { setLocalTimeoutsSql } from './transaction-timeouts.js';
import { pageClientOf, pageClientSettingsOf, replacePageClient, type PageClientSettings } from './page-client.js';
import { setTraceContext } from './trace-context.js';

/** Runs one statement of the transaction and returns its rows. */
export type RunStatement = <T extends Record<string, unknown>>(query: SQL) => Promise<T[]>;

const dialect = new PgDialect();

/**
 * A page transaction with no answer within this is abandoned with its connection (replaced
 * like a lost one): the server commits or rolls it back on its own, and the checkpoint's
 * compare-and-set makes either safe. Generous, because a page may queue legitimately behind
 * a large registration holding the match lock.
 */
export const PAGE_TRANSACTION_DEADLINE_MS = 120_000;

// one transaction at a time per page client: its single connection is the transaction
const queues = new WeakMap<postgres.Sql, Promise<unknown>>();

/**
 * Runs `body` in one transaction, rolled back when it throws, resolved once
 * committed. On Postgres it runs on the database's page client (a single
 * connection, see src/db/page-client.ts): BEGIN is pipelined with the first
 * statements, statements issued together (Promise.all) are pipelined too, and
 * they are prepared — the page statements are the same text every time, so the
 * connection parses and plans them once, where drizzle's execute() would describe
 * and plan every call. A session lost mid-transaction rejects the call and the
 * client is replaced for the next one. Embedded PGlite goes through drizzle's transaction.
 */
export async function inTransaction<T>(
  db: Db,
  body: (run: RunStatement) => Promise<T>,
  deadlineMs = PAGE_TRANSACTION_DEADLINE_MS,
): Promise<T> {
  const client = pageClientOf(db);
  if (!client) return db.transaction((tx) => body((query) => queryRows(tx, query)));
  return queued(db, client, () => onConnection(client, pageClientSettingsOf(db), body), deadlineMs);
}

/** What a pipelined transaction answered: each statement's rows, and when the last of them arrived. */
export interface PipelinedResult {
  rows: Array<Array<Record<string, unknown>>>;
  /** performance.now() when the last statement's rows arrived (the commit's answer comes after) */
  statementsDoneAt: number;
}

/**
 * One transaction whose statements are all known before it starts: BEGIN, the statements and COMMIT
 * go out together, so the transaction costs one round trip. A statement that fails aborts the
 * transaction and the COMMIT queued behind it then rolls it back (the server answers it with
 * ROLLBACK): the call rejects with that statement's error and nothing is written. Resolves once
 * committed. Same page client, prepared statements, deadline and connection handling as inTransaction.
 */
export async function inPipelinedTransaction(
  db: Db,
  statements: readonly SQL[],
  deadlineMs = PAGE_TRANSACTION_DEADLINE_MS,
  /** called once the first statement answered (or failed): the match lock was granted, or will not be */
  onFirstAnswer?: () => void,
): Promise<PipelinedResult> {
  const client = pageClientOf(db);
  if (!client) {
    return db.transaction(async (tx) => {
      const rows: PipelinedResult['rows'] = [];
      for (const statement of statements) {
        rows.push(await queryRows(tx, statement));
        if (rows.length === 1) onFirstAnswer?.();
      }
      return { rows, statementsDoneAt: performance.now() };
    });
  }
  return queued(db, client, () => pipelined(client, pageClientSettingsOf(db), statements, onFirstAnswer), deadlineMs);
}

/** Runs `work` on the page client after the transaction before it, with the deadline and connection-loss handling. */
function queued<T>(db: Db, client: postgres.Sql, work: () => Promise<T>, deadlineMs: number): Promise<T> {
  const previous = queues.get(client) ?? Promise.resolve();
  const current = previous
    .catch(() => {})
    .then(() => withDeadline(work(), deadlineMs, 'page transaction'))
    .catch((error: unknown) => {
      // the session is gone (or stopped answering), and with it the transaction: nothing to roll back, and the client is not reused
      if (isConnectionLoss(error)) replacePageClient(db, client);
      throw error;
    });
  queues.set(client, current);
  return current;
}

async function pipelined(
  client: postgres.Sql,
  settings: PageClientSettings,
  statements: readonly SQL[],
  onFirstAnswer?: () => void,
): Promise<PipelinedResult> {
  // postgres.js queries are lazy; execute() sends them now, so they go out in call order, behind one another
  const begun = beginOn(client, settings);
  // the page's trace for the rows it writes (trace-context.ts): nothing sent when tracing is off
  const traced = setTraceContext(client, settings.prepare);
  const answers = statements.map((statement) => {
    const { sql, params } = dialect.sqlToQuery(statement);
    return client.unsafe(sql, params as postgres.ParameterOrJSON<never>[], { prepare: settings.prepare }).execute();
  });
  if (onFirstAnswer) answers[0]?.then(onFirstAnswer, onFirstAnswer);
  const committed = client.unsafe('commit').execute();
  // every promise observed at once: a failure in one must not leave the others unhandled
  const settled = Promise.allSettled([begun, ...(traced ? [traced] : []), ...answers, committed]);
  let statementsDoneAt = 0;
  const rows = await Promise.all(answers).then(
    (results) => {
      statementsDoneAt = performance.now();
      return results as unknown as PipelinedResult['rows'];
    },
    async (error: unknown) => {
      // the commit behind the failed statement ends the transaction (as a rollback); wait for it unless the session is gone
      if (!isConnectionLoss(error)) await settled;
      throw error;
    },
  );
  const outcomes = await settled;
  // BEGIN and COMMIT fail only with the session (or a deferred trigger at commit): then nothing was committed
  for (const outcome of [outcomes[0], outcomes[outcomes.length - 1]]) if (outcome?.status === 'rejected') throw outcome.reason;
  return { rows, statementsDoneAt };
}

/** BEGIN, and behind a pooler the transaction's own idle timeout (see PageClientSettings). */
function beginOn(client: postgres.Sql, settings: PageClientSettings) {
  return settings.prepare
    ? client.unsafe('begin').execute()
    : // behind a pooler: the server connection of this transaction gets the timeout for this transaction only
      // (an integer this code computed, never input)
      // (integers this code computed, never input); lock and statement timeouts likewise (transaction-timeouts.ts)
      client
        .unsafe(
          `begin; set local idle_in_transaction_session_timeout = ${Math.round(settings.idleInTransactionTimeoutMs)}` +
            (settings.timeouts ? `; ${setLocalTimeoutsSql(settings.timeouts)}` : ''),
        )
        .simple()
        .execute();
}

async function onConnection<T>(client: postgres.Sql, settings: PageClientSettings, body: (run: RunStatement) => Promise<T>): Promise<T> {
  const run: RunStatement = async <R extends Record<string, unknown>>(query: SQL) => {
    const { sql, params } = dialect.sqlToQuery(query);
    // postgres.js queries are lazy; execute() sends them now, so they go out in call order
    return (await client
      .unsafe(sql, params as postgres.ParameterOrJSON<never>[], { prepare: settings.prepare })
      .execute()) as unknown as R[];
  };
  const begun = beginOn(client, settings);
  const traced = setTraceContext(client, settings.prepare);
  let result: T;
  try {
    [, , result] = await Promise.all([begun, traced, body(run)]);
  } catch (error) {
    // queued behind whatever is still in flight, so it ends this transaction
    if (!isConnectionLoss(error)) await client.unsafe('rollback').catch(() => {});
    throw error;
  }
  await client.unsafe('commit');
  return result;
}
