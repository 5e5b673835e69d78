import { describe, expect, test, vi } from 'vitest';
import { isRetryableFollowError } from '../../src/api/follow-retry.js';
import { statusChannel } from '../../src/api/status-channel.js';
import { Wakeup } from '../../src/lib/wakeup.js';

describe('statusChannel', () => {
  test.each([
    ['intake_sync', 'intake_sync_status'],
    ['tenant_b', 'tenant_b_status'],
    ['s'.repeat(63), `${'s'.repeat(56)}_status`],
  ])('%s -> %s (at most 63 bytes)', (schema, channel) => {
    expect(statusChannel(schema)).toBe(channel);
    expect(Buffer.byteLength(statusChannel(schema))).toBeLessThanOrEqual(63);
  });
});

describe('isRetryableFollowError', () => {
  test.each([
    [{ code: '57P01', severity: 'FATAL' }, true, 'backend terminated'],
    [{ code: 'CONNECTION_CLOSED' }, true, 'socket closed'],
    [{ code: 'ECONNREFUSED' }, true, 'server down'],
    [{ code: 'QUERY_DEADLINE' }, true, 'no answer'],
    [{ code: '57P03', severity: 'FATAL' }, true, 'server starting'],
    [{ code: '28P01', severity: 'FATAL' }, false, 'password refused'],
    [{ code: '3D000', severity: 'FATAL' }, false, 'no such database'],
    [{ code: '42883', severity: 'ERROR' }, false, 'function missing: not migrated'],
    [{ code: '42501', severity: 'ERROR' }, false, 'permission denied'],
    [{ code: '22023', severity: 'ERROR' }, false, 'malformed cursor'],
    [new Error('plain'), false, 'a bug'],
  ] as Array<[unknown, boolean, string]>)('%o -> %s (%s)', (error, retry) => {
    expect(isRetryableFollowError(error)).toBe(retry);
  });
});

describe('Wakeup', () => {
  test('a wake while nobody waits is kept for the next wait, and only for that one', async () => {
    const wakeup = new Wakeup();
    wakeup.wake();
    // a minute's wait that returns at all (within the test's timeout) was cut short by the kept wake
    await wakeup.wait(60_000);
    // consumed: the next wait sleeps until woken
    let woken = false;
    const waiting = wakeup.wait(60_000).then(() => (woken = true));
    await Promise.resolve();
    expect(woken).toBe(false);
    wakeup.wake();
    await waiting;
    expect(woken).toBe(true);
  });

  test('clear() forgets a pending wake; wait() resolves on timeout and at once on abort', async () => {
    const wakeup = new Wakeup();
    wakeup.wake();
    wakeup.clear();
    vi.useFakeTimers();
    try {
      let timedOut = false;
      const timed = wakeup.wait(30).then(() => (timedOut = true));
      await vi.advanceTimersByTimeAsync(29);
      expect(timedOut).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      await timed;
      expect(timedOut).toBe(true);
    } finally {
      vi.useRealTimers();
    }
    const stop = new AbortController();
    const waiting = wakeup.wait(60_000, stop.signal);
    stop.abort();
    await waiting;
    await wakeup.wait(60_000, stop.signal);
  });
});
