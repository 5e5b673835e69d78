import type postgres from 'postgres';
import { isConnectionLoss } from './connection-loss.js';

/**
 * How long a retired client's connections may go on answering the queries they already have
 * before the client is destroyed: a query still unanswered then is one postgres.js stranded on
 * a dead connection, and is rejected (CONNECTION_DESTROYED, a connection loss) rather than left
 * pending. As long as connect_timeout: the longest the daemon waits for a connection to answer.
 */
export const RETIRED_CLIENT_GRACE_S = 10;

/** A pool client that is swapped for a fresh one once a query on it lost its connection. */
export interface ReplaceableClient {
  /** forwards to the current client; hand this to drizzle and to callers */
  sql: postgres.Sql;
  /** how many times the client was replaced (for tests and logs) */
  replacements(): number;
  /** ends the current client (`timeoutS` for its pending queries; undefined: no limit) and every retired one at once */
  end(timeoutS: number | undefined): Promise<void>;
}

/**
 * postgres.js 3.4.9 can leave a connection whose socket died in a state it never leaves by
 * itself: a write timer cleared but not reset, after which its startup message is buffered and
 * never sent (every connect ends in CONNECT_TIMEOUT), or queries pushed to it while the socket
 * was closing that no event ever settles (porsager/postgres#1193, #1208, #1209 and #1215). A
 * termination storm, a failover or a pooler restart leaves such connections in a pool. So a
 * client one of whose queries lost its connection is never reused, as with the page client
 * (page-client.ts): later calls go to a fresh client from `open`, and the old one is ended,
 * its stranded queries rejected after RETIRED_CLIENT_GRACE_S. Bounded: one replacement per
 * client, whichever of its queries fails first; a retired client's own failures replace nothing.
 */
export function replaceableClient(open: () => postgres.Sql, graceS = RETIRED_CLIENT_GRACE_S): ReplaceableClient {
  let current = open();
  let replaced = 0;
  const retired = new Set<postgres.Sql>();

  const retire = (owner: postgres.Sql, error: unknown) => {
    if (owner !== current || !isConnectionLoss(error) || (error as { code?: unknown }).code === 'CONNECTION_ENDED') return;
    current = open();
    replaced++;
    retired.add(owner);
    void owner
      .end({ timeout: graceS })
      .catch(() => {})
      .finally(() => retired.delete(owner));
  };
  // observes without running: a postgres.js query is lazy and runs when its own then() is first called
  const watch = <T>(owner: postgres.Sql, result: T): T => {
    if (result instanceof Promise) Promise.prototype.then.call(result, undefined, (error: unknown) => retire(owner, error));
    return result;
  };
  const forwarding =
    (name: 'unsafe' | 'file' | 'begin' | 'reserve') =>
    (...args: unknown[]) => {
      const owner = current;
      return watch(owner, (owner[name] as (...a: unknown[]) => unknown)(...args));
    };
  const end = async (timeoutS: number | undefined) => {
    await Promise.all([current.end({ timeout: timeoutS }), ...[...retired].map((client) => client.end({ timeout: 0 }))]);
  };

  const sql = new Proxy(() => {}, {
    apply: (_target, _this, args: unknown[]) => {
      const owner = current;
      return watch(owner, (owner as unknown as (...a: unknown[]) => unknown)(...args));
    },
    get: (_target, property) => {
      if (property === 'unsafe' || property === 'file' || property === 'begin' || property === 'reserve') return forwarding(property);
      if (property === 'end') return ({ timeout }: { timeout?: number | undefined } = {}) => end(timeout);
      return Reflect.get(current, property);
    },
    set: (_target, property, value) => Reflect.set(current, property, value),
    has: (_target, property) => Reflect.has(current, property),
  }) as unknown as postgres.Sql;

  return { sql, replacements: () => replaced, end };
}
