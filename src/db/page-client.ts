import type postgres from 'postgres';
import type { TransactionTimeouts } from './transaction-timeouts.js';

/**
 * Page transactions run as plain BEGIN ... COMMIT queries on a single-connection
 * postgres.js client kept beside the pool, not through begin() or reserve():
 * postgres.js 3.4 writes ROLLBACK to a transaction's connection after its session
 * died, and writing to that null socket throws from a timer and kills the process
 * (porsager/postgres#1208).
 *
 * A client whose session died is replaced, never reused: postgres.js 3.4 can keep
 * a stale write timer across the reconnect of a connection closed mid-write, after
 * which small queries on it are queued and never sent.
 */
interface PageClientSlot {
  open: () => postgres.Sql;
  current: postgres.Sql;
  retired: postgres.Sql[];
  settings: PageClientSettings;
}

/**
 * How page transactions run on the page client. Directly connected, the page statements are
 * prepared once per connection and the session carries idle_in_transaction_session_timeout from
 * its startup. Behind a pooler neither holds across transactions: statements go unnamed, and the
 * timeout is set with SET LOCAL inside each transaction (pipelined with BEGIN: no extra round trip).
 */
export type PageClientSettings =
  | { prepare: true }
  | { prepare: false; idleInTransactionTimeoutMs: number; timeouts?: TransactionTimeouts | undefined };

const slots = new WeakMap<object, PageClientSlot>();

/** Registers how `db` opens its page client; the first one is opened now. */
export function attachPageClient(db: object, open: () => postgres.Sql, settings: PageClientSettings = { prepare: true }): void {
  slots.set(db, { open, current: open(), retired: [], settings });
}

/** The page transaction settings of `db` (prepared statements unless it goes through a pooler). */
export function pageClientSettingsOf(db: object): PageClientSettings {
  return slots.get(db)?.settings ?? { prepare: true };
}

/** The current page client of `db`, or undefined (embedded PGlite, or a handle opened elsewhere). */
export function pageClientOf(db: object): postgres.Sql | undefined {
  return slots.get(db)?.current;
}

/** Swaps `client` for a fresh one after its session died; the old one is closed in the background. */
export function replacePageClient(db: object, client: postgres.Sql): void {
  const slot = slots.get(db);
  if (!slot || slot.current !== client) return;
  slot.current = slot.open();
  slot.retired.push(client);
  // timeout 0: nothing on it is worth waiting for, its session is gone
  void client.end({ timeout: 0 }).finally(() => slot.retired.splice(slot.retired.indexOf(client), 1));
}

/** Closes the page clients of `db` (current and any still closing). */
export async function closePageClients(db: object, timeoutSeconds: number): Promise<void> {
  const slot = slots.get(db);
  if (!slot) return;
  await Promise.all([slot.current.end({ timeout: timeoutSeconds }), ...slot.retired.map((c) => c.end({ timeout: 0 }))]);
}
