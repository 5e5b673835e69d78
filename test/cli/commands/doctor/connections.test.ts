import { describe, expect, test } from 'vitest';
import { connectionBudget, DAEMON_CONNECTIONS } from '../../../../src/cli/commands/doctor/connections.js';

describe('doctor: the worst case of connections against max_connections', () => {
  test('one daemon process opens at most its pool, the page connection and the lease session', () => {
    expect(DAEMON_CONNECTIONS).toBe(6);
  });

  test.each([
    // max, reserved, console, ok, worst, room
    [100, 3, 10, true, 16, 14],
    [20, 3, 10, true, 16, 1],
    [18, 3, 10, false, 16, 0],
    [10, 3, 2, false, 8, 0],
    [500, 13, 50, true, 56, 72],
  ])('max_connections %i, %i reserved, console %i: ok %s, worst %i, room for %i daemons', (max, reserved, console, ok, worst, room) => {
    const result = connectionBudget({ maxConnections: max, reserved, daemon: 6, console, consoleSource: 'CONSOLE_MAX_CONNECTIONS' });
    expect(result.ok).toBe(ok);
    expect(result.check).toBe('connections');
    expect(result.detail).toBe(
      `worst case ${worst} of max_connections ${max} (${reserved} reserved): each daemon process 6 (pool 4, page 1, lease 1), ` +
        `the console ${console} (CONSOLE_MAX_CONNECTIONS); room for ${room} daemon process(es) beside one console`,
    );
  });
});
