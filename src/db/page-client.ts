import type postgres from 'postgres';

/**
 * Page transactions run as plain BEGIN ... COMMIT queries on a single-connection
 * postgres.js client kept beside the pool, not through begin() or reserve():
 * postgres.js 3.4 writes ROLLBACK to a transaction's connection after its session
 * died, and writing to that null socket throws from a timer and kills the process
 * (porsager/postgres#1208). A plain pooled query on a dead connection just
 * reconnects, and a session that died took its open transaction with it.
 */
const pageClients = new WeakMap<object, postgres.Sql>();

/** Registers the single-connection client page transactions of `db` run on. */
export function attachPageClient(db: object, client: postgres.Sql): void {
  pageClients.set(db, client);
}

/** The page client of `db`, or undefined (embedded PGlite, or a handle opened elsewhere). */
export function pageClientOf(db: object): postgres.Sql | undefined {
  return pageClients.get(db);
}
