import type postgres from 'postgres';
import { describe, expect, test } from 'vitest';
import { type ConsoleSession, isIdleExpired, type SessionLimits, SessionStore, sessionEnd } from '../../src/console/session-store.js';

/** A connection stand-in that records end(): the store's only use of it. */
function fakeSql() {
  const state = { ended: 0 };
  const sql = { end: async () => void state.ended++ } as unknown as postgres.Sql;
  return { sql, state };
}

const LIMITS: SessionLimits = { idleTimeoutMs: 15 * 60_000, maxLifetimeMs: 12 * 3_600_000, perRole: 2, total: 3 };

function session(store: SessionStore, role = 'r', options?: Parameters<SessionStore['create']>[2]): ConsoleSession {
  const s = store.create(role, fakeSql().sql, options);
  if (typeof s === 'string') throw new Error(s);
  return s;
}

describe('SessionStore', () => {
  test('a session used within the idle timeout stays; one idle that long is ended, its connection closed, its slot given back', async () => {
    let now = 1_000_000;
    let released = 0;
    const store = new SessionStore(
      LIMITS,
      () => now,
      () => void released++,
    );
    const { sql, state } = fakeSql();
    const s = store.create('clinic_a_staff', sql);
    if (typeof s === 'string') throw new Error(s);
    now += 14 * 60_000;
    expect(await store.use(s.id)).toBe(s);
    now += 15 * 60_000 - 1;
    expect(await store.use(s.id)).toBe(s);
    now += 15 * 60_000;
    expect(await store.use(s.id)).toEqual({ ended: 'idle' });
    expect(state.ended).toBe(1);
    expect(released).toBe(1);
    expect(await store.use(s.id)).toBeUndefined();
  });

  test('CONSOLE_SESSION_MAX: a session in constant use ends at its absolute lifetime', async () => {
    let now = 0;
    const store = new SessionStore(LIMITS, () => now);
    const s = session(store);
    for (now = 0; now < 12 * 3_600_000; now += 10 * 60_000) expect(await store.use(s.id)).toBe(s);
    now = 12 * 3_600_000;
    expect(await store.use(s.id)).toEqual({ ended: 'lifetime' });
  });

  test('sessions per role and in total are capped', () => {
    const store = new SessionStore(LIMITS, () => 0);
    session(store, 'a');
    session(store, 'a');
    expect(store.create('a', fakeSql().sql)).toBe('role-full');
    session(store, 'b');
    expect(store.create('c', fakeSql().sql)).toBe('full');
    expect(store.countOf('a')).toBe(2);
  });

  test('ids and CSRF tokens are random and distinct; unknown ids find nothing', async () => {
    const store = new SessionStore(LIMITS, () => 0);
    const a = session(store);
    const b = session(store);
    expect(a.id).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(new Set([a.id, b.id, a.csrf, b.csrf]).size).toBe(4);
    expect(await store.use('nope')).toBeUndefined();
    expect(await store.use(undefined)).toBeUndefined();
  });

  test('sweep ends idle and too-old sessions only', async () => {
    let now = 0;
    const store = new SessionStore({ ...LIMITS, idleTimeoutMs: 1_000, maxLifetimeMs: 5_000 }, () => now);
    const old = session(store, 'a');
    now = 600;
    const fresh = session(store, 'b');
    now = 1_200;
    expect(await store.sweep()).toBe(1);
    expect(await store.use(old.id)).toBeUndefined();
    expect(await store.use(fresh.id)).toBe(fresh);
  });

  test('revalidate ends the sessions the check refuses, keeps unknown ones, and drops their credentials', async () => {
    const store = new SessionStore(LIMITS, () => 0);
    const reconnect = async () => fakeSql().sql;
    const keep = session(store, 'a', { reconnect });
    const gone = session(store, 'b', { reconnect });
    const unsure = session(store, 'c', { reconnect });
    const answers = new Map<string, boolean | 'unknown'>([
      ['a', true],
      ['b', false],
      ['c', 'unknown'],
    ]);
    expect(await store.revalidate(async (s) => answers.get(s.role) ?? true)).toBe(1);
    expect(await store.use(keep.id)).toBe(keep);
    expect(await store.use(unsure.id)).toBe(unsure);
    expect(await store.use(gone.id)).toBeUndefined();
    expect(gone.reconnect).toBeUndefined();
    await store.endAll();
    expect(keep.reconnect).toBeUndefined();
    expect(store.size).toBe(0);
  });

  test.each([
    [0, 999, 1000, false],
    [0, 1000, 1000, true],
    [500, 2000, 1000, true],
  ])('isIdleExpired(%d, %d, %d) = %s', (last, now, timeout, expired) => {
    expect(isIdleExpired(last, now, timeout)).toBe(expired);
  });

  test.each([
    [{ createdAt: 0, lastSeenAt: 0 }, 60_000, undefined],
    [{ createdAt: 0, lastSeenAt: 0 }, 15 * 60_000, 'idle'],
    [{ createdAt: 0, lastSeenAt: 12 * 3_600_000 - 1 }, 12 * 3_600_000, 'lifetime'],
  ] as const)('sessionEnd(%j at %d) = %s', (s, now, ended) => {
    expect(sessionEnd(s, now, LIMITS)).toBe(ended);
  });
});
