import { afterEach, describe, expect, it, vi } from 'vitest';
import { SAME_PRESS_MS, shutdownOnSignal, signalMeaning } from '../../src/daemon/signals.js';
import { createLogger } from '../../src/log/log.js';

describe('signalMeaning', () => {
  it('the first signal shuts down; copies of the same press are ignored; a later one forces', () => {
    expect(signalMeaning(undefined, 5)).toBe('shutdown');
    expect(signalMeaning(1_000, 1_000)).toBe('same-press');
    expect(signalMeaning(1_000, 1_000 + SAME_PRESS_MS - 1)).toBe('same-press');
    expect(signalMeaning(1_000, 1_000 + SAME_PRESS_MS)).toBe('force');
  });
});

describe('shutdownOnSignal', () => {
  let remove: (() => void) | undefined;
  afterEach(() => {
    remove?.();
    vi.restoreAllMocks();
  });

  it('one Ctrl-C delivered three times (npm, the relaunch parent, the terminal) shuts down once and does not exit', () => {
    let clock = 10_000;
    const shutdown = vi.fn(() => new Promise<void>(() => {}));
    const exit = vi.spyOn(process, 'exit').mockImplementation((() => undefined) as never);
    remove = shutdownOnSignal({ shutdown, graceMs: 60_000, log: createLogger({ level: 'silent' }), now: () => clock });
    process.emit('SIGINT', 'SIGINT');
    clock += 3;
    process.emit('SIGINT', 'SIGINT');
    clock += 40;
    process.emit('SIGTERM', 'SIGTERM');
    expect(shutdown).toHaveBeenCalledTimes(1);
    expect(exit).not.toHaveBeenCalled();
    clock += SAME_PRESS_MS;
    process.emit('SIGINT', 'SIGINT');
    expect(exit).toHaveBeenCalledWith(1);
    expect(shutdown).toHaveBeenCalledTimes(1);
  });
});
