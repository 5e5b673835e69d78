/**
 * How long a statement of the daemon may run, and wait for a lock, before the server cancels it
 * (statement_timeout, lock_timeout). Without them a transaction an application left open after
 * register_prescription (holding the match lock) stalled every page until the client's 120 s
 * deadline, with nothing in between saying why.
 *
 * Directly connected they are startup parameters of every daemon connection (pool, page client,
 * lease session): no round trip. Behind a transaction pooler a session setting would land on
 * whichever server connection comes next, so the page transaction sets them with SET LOCAL,
 * pipelined with its BEGIN; see docs/operations.md for the role defaults that cover the rest.
 */
export interface TransactionTimeouts {
  lockTimeoutMs: number;
  statementTimeoutMs: number;
}

/** DB_LOCK_TIMEOUT_MS and DB_STATEMENT_TIMEOUT_MS defaults. */
export const DEFAULT_TRANSACTION_TIMEOUTS: TransactionTimeouts = { lockTimeoutMs: 10_000, statementTimeoutMs: 60_000 };

/** The settings as postgres.js startup parameters (milliseconds, integers this code computed). */
export function timeoutStartupParameters(timeouts: TransactionTimeouts): Record<string, number> {
  return { lock_timeout: Math.round(timeouts.lockTimeoutMs), statement_timeout: Math.round(timeouts.statementTimeoutMs) };
}

/** The settings for one transaction: `set local` statements to send right after BEGIN (never input: integers). */
export function setLocalTimeoutsSql(timeouts: TransactionTimeouts): string {
  return `set local lock_timeout = ${Math.round(timeouts.lockTimeoutMs)}; set local statement_timeout = ${Math.round(timeouts.statementTimeoutMs)}`;
}
