import type postgres from 'postgres';
import { describe, expect, test } from 'vitest';
import { isIdleExpired, SessionStore } from '../../src/console/session-store.js';

/** A connection stand-in that records end(): the store's only use of it. */
function fakeSql() {
  const state = { ended: 0 };
  const sql = { end: async () => void state.ended++ } as unknown as postgres.Sql;
  return { sql, state };
}

describe('SessionStore', () => {
  test('a session used within the idle timeout stays; one idle that long is ended and its connection closed', async () => {
    let now = 1_000_000;
    const store = new SessionStore(15 * 60_000, () => now);
    const { sql, state } = fakeSql();
    const session = store.create('clinic_a_staff', sql);
    if (!session) throw new Error('no session');
    now += 14 * 60_000;
    expect(await store.use(session.id)).toBe(session);
    now += 15 * 60_000 - 1;
    expect(await store.use(session.id)).toBe(session);
    now += 15 * 60_000;
    expect(await store.use(session.id)).toBe('expired');
    expect(state.ended).toBe(1);
    expect(await store.use(session.id)).toBeUndefined();
  });

  test('ids and CSRF tokens are random and distinct; unknown ids find nothing', async () => {
    const store = new SessionStore(60_000, () => 0);
    const a = store.create('r', fakeSql().sql);
    const b = store.create('r', fakeSql().sql);
    expect(a?.id).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(new Set([a?.id, b?.id, a?.csrf, b?.csrf]).size).toBe(4);
    expect(await store.use('nope')).toBeUndefined();
    expect(await store.use(undefined)).toBeUndefined();
  });

  test('sweep ends idle sessions only; the store refuses past its maximum', async () => {
    let now = 0;
    const store = new SessionStore(1_000, () => now, 2);
    const old = store.create('a', fakeSql().sql);
    now = 600;
    const fresh = store.create('b', fakeSql().sql);
    expect(store.create('c', fakeSql().sql)).toBeUndefined();
    now = 1_200;
    expect(await store.sweep()).toBe(1);
    expect(await store.use(old?.id)).toBeUndefined();
    expect(await store.use(fresh?.id)).toBe(fresh);
  });

  test.each([
    [0, 999, 1000, false],
    [0, 1000, 1000, true],
    [500, 2000, 1000, true],
  ])('isIdleExpired(%d, %d, %d) = %s', (last, now, timeout, expired) => {
    expect(isIdleExpired(last, now, timeout)).toBe(expired);
  });
});
