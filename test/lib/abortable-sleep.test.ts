import { afterEach, describe, expect, it, vi } from 'vitest';
import { abortableSleep } from '../../src/lib/abortable-sleep.js';

describe('abortableSleep', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('resolves after the delay', async () => {
    vi.useFakeTimers();
    let done = false;
    const sleeping = abortableSleep(1_000).then(() => {
      done = true;
    });
    await vi.advanceTimersByTimeAsync(999);
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await sleeping;
    expect(done).toBe(true);
  });

  it('rejects with the signal reason as soon as it aborts, and clears its timer', async () => {
    vi.useFakeTimers();
    const controller = new AbortController();
    const reason = new Error('shutting down');
    const sleeping = abortableSleep(60_000, controller.signal);
    controller.abort(reason);
    await expect(sleeping).rejects.toBe(reason);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('rejects at once when the signal is already aborted', async () => {
    const reason = new Error('already');
    await expect(abortableSleep(60_000, AbortSignal.abort(reason))).rejects.toBe(reason);
  });
});
