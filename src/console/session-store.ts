import { randomBytes } from 'node:crypto';
import type postgres from 'postgres';

/** One signed-in user: the role, its own database connection, its CSRF token, when it was last used. */
export interface ConsoleSession {
  id: string;
  role: string;
  csrf: string;
  sql: postgres.Sql;
  lastSeenAt: number;
  /** SSO mode: the proxy's identity this session was created for (a later request must carry the same) */
  identity?: string | undefined;
  /** a one-time message for the next page (what an action did); never patient data */
  flash?: string | undefined;
}

/** A random token for session ids and CSRF tokens: 32 bytes, URL-safe. */
export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

/** Whether a session last used at `lastSeenAt` is still signed in at `now`. Pure. */
export function isIdleExpired(lastSeenAt: number, now: number, idleTimeoutMs: number): boolean {
  return now - lastSeenAt >= idleTimeoutMs;
}

/**
 * Server-side sessions, in memory: the cookie holds only a random id. A session idle for
 * CONSOLE_IDLE_TIMEOUT is signed out on its next request or by the periodic sweep, and its
 * connection is closed. `now` is injected so tests move time instead of waiting.
 */
export class SessionStore {
  readonly #sessions = new Map<string, ConsoleSession>();

  constructor(
    private readonly idleTimeoutMs: number,
    private readonly now: () => number,
    private readonly maxSessions = 500,
  ) {}

  /** Starts a session for a role whose connection has just been proven; refuses past maxSessions. */
  create(role: string, sql: postgres.Sql, identity?: string): ConsoleSession | undefined {
    if (this.#sessions.size >= this.maxSessions) return undefined;
    const session: ConsoleSession = { id: newToken(), role, csrf: newToken(), sql, lastSeenAt: this.now(), identity };
    this.#sessions.set(session.id, session);
    return session;
  }

  /** The live session with this id, touched; an idle one is ended and reported as 'expired'. */
  async use(id: string | undefined): Promise<ConsoleSession | 'expired' | undefined> {
    if (!id) return undefined;
    const session = this.#sessions.get(id);
    if (!session) return undefined;
    const now = this.now();
    if (isIdleExpired(session.lastSeenAt, now, this.idleTimeoutMs)) {
      await this.end(id);
      return 'expired';
    }
    session.lastSeenAt = now;
    return session;
  }

  /** Ends a session and closes its connection. */
  async end(id: string): Promise<void> {
    const session = this.#sessions.get(id);
    if (!session) return;
    this.#sessions.delete(id);
    await session.sql.end({ timeout: 2 }).catch(() => {});
  }

  /** Ends every idle session (run periodically, so an abandoned tab does not hold a connection). */
  async sweep(): Promise<number> {
    const now = this.now();
    const idle = [...this.#sessions.values()].filter((s) => isIdleExpired(s.lastSeenAt, now, this.idleTimeoutMs));
    for (const s of idle) await this.end(s.id);
    return idle.length;
  }

  /** Ends every session (shutdown). */
  async endAll(): Promise<void> {
    for (const id of [...this.#sessions.keys()]) await this.end(id);
  }

  get size(): number {
    return this.#sessions.size;
  }
}
