import { randomBytes } from 'node:crypto';
import type postgres from 'postgres';

/** One signed-in user: the role, its own database connection, its CSRF token, when it started and was last used. */
export interface ConsoleSession {
  id: string;
  role: string;
  csrf: string;
  sql: postgres.Sql;
  createdAt: number;
  lastSeenAt: number;
  /** SSO mode: the proxy's identity this session was created for (a later request must carry the same) */
  identity?: string | undefined;
  /** a one-time message for the next page (what an action did); never patient data */
  flash?: string | undefined;
  /**
   * opens a new connection with the session's credentials (the periodic check signs in again with
   * them); the one place a password stays, dropped when the session ends
   */
  reconnect?: (() => Promise<postgres.Sql>) | undefined;
}

/** How long sessions live and how many there may be. */
export interface SessionLimits {
  /** CONSOLE_IDLE_TIMEOUT */
  idleTimeoutMs: number;
  /** CONSOLE_SESSION_MAX: the absolute lifetime, however busy */
  maxLifetimeMs: number;
  /** CONSOLE_SESSIONS_PER_ROLE */
  perRole: number;
  /** all sessions (CONSOLE_MAX_CONNECTIONS bounds them first) */
  total: number;
}

/** Why a session is no longer there: after idle time, after its lifetime, or ended by the periodic check. */
export type EndedBy = 'idle' | 'lifetime' | 'revoked';

/** A random token for session ids and CSRF tokens: 32 bytes, URL-safe. */
export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

/** Whether a session last used at `lastSeenAt` is still signed in at `now`. Pure. */
export function isIdleExpired(lastSeenAt: number, now: number, idleTimeoutMs: number): boolean {
  return now - lastSeenAt >= idleTimeoutMs;
}

/** Why a session must end at `now`, or undefined while it may go on. Pure. */
export function sessionEnd(
  session: Pick<ConsoleSession, 'createdAt' | 'lastSeenAt'>,
  now: number,
  limits: SessionLimits,
): EndedBy | undefined {
  if (now - session.createdAt >= limits.maxLifetimeMs) return 'lifetime';
  if (isIdleExpired(session.lastSeenAt, now, limits.idleTimeoutMs)) return 'idle';
  return undefined;
}

/**
 * Server-side sessions, in memory: the cookie holds only a random id. A session idle for
 * CONSOLE_IDLE_TIMEOUT, or older than CONSOLE_SESSION_MAX, is signed out on its next request or
 * by the periodic sweep, and its connection closed. `now` is injected so tests move time instead of
 * waiting; `onEnd` hands back the session's connection slot.
 */
export class SessionStore {
  readonly #sessions = new Map<string, ConsoleSession>();

  constructor(
    private readonly limits: SessionLimits,
    private readonly now: () => number,
    private readonly onEnd: () => void = () => {},
  ) {}

  /** Starts a session for a role whose connection has just been proven; refuses past the total or the role's cap. */
  create(
    role: string,
    sql: postgres.Sql,
    options: { identity?: string | undefined; reconnect?: () => Promise<postgres.Sql> } = {},
  ): ConsoleSession | 'full' | 'role-full' {
    if (this.#sessions.size >= this.limits.total) return 'full';
    if (this.countOf(role) >= this.limits.perRole) return 'role-full';
    const now = this.now();
    const session: ConsoleSession = {
      id: newToken(),
      role,
      csrf: newToken(),
      sql,
      createdAt: now,
      lastSeenAt: now,
      identity: options.identity,
      reconnect: options.reconnect,
    };
    this.#sessions.set(session.id, session);
    return session;
  }

  /** The role's open sessions. */
  countOf(role: string): number {
    let n = 0;
    for (const s of this.#sessions.values()) if (s.role === role) n++;
    return n;
  }

  /** The live session with this id, touched; one past its idle time or lifetime is ended and reported. */
  async use(id: string | undefined): Promise<ConsoleSession | { ended: EndedBy } | undefined> {
    if (!id) return undefined;
    const session = this.#sessions.get(id);
    if (!session) return undefined;
    const now = this.now();
    const ended = sessionEnd(session, now, this.limits);
    if (ended) {
      await this.end(id);
      return { ended };
    }
    session.lastSeenAt = now;
    return session;
  }

  /** Ends a session, closes its connection and forgets its credentials. */
  async end(id: string): Promise<void> {
    const session = this.#sessions.get(id);
    if (!session) return;
    this.#sessions.delete(id);
    session.reconnect = undefined;
    await session.sql.end({ timeout: 2 }).catch(() => {});
    this.onEnd();
  }

  /** Ends every idle or too-old session (run periodically, so an abandoned tab does not hold a connection). */
  async sweep(): Promise<number> {
    const now = this.now();
    const over = [...this.#sessions.values()].filter((s) => sessionEnd(s, now, this.limits) !== undefined);
    for (const s of over) await this.end(s.id);
    return over.length;
  }

  /**
   * Asks `stillAllowed` about each session, one at a time (one extra backend at most), and ends
   * those it says no to: the role lost LOGIN, was dropped, changed its password, or may no longer
   * sign in. An answer of 'unknown' (the database unreachable) keeps the session.
   */
  async revalidate(stillAllowed: (session: ConsoleSession) => Promise<boolean | 'unknown'>): Promise<number> {
    let ended = 0;
    for (const session of [...this.#sessions.values()]) {
      if (!this.#sessions.has(session.id)) continue;
      if ((await stillAllowed(session)) === false) {
        await this.end(session.id);
        ended++;
      }
    }
    return ended;
  }

  /** Ends every session (shutdown). */
  async endAll(): Promise<void> {
    for (const id of [...this.#sessions.keys()]) await this.end(id);
  }

  get size(): number {
    return this.#sessions.size;
  }
}
