import { afterEach, describe, expect, it, vi } from 'vitest';
import { reportCliError } from '../../src/cli/context/errors.js';
import { DaemonError } from '../../src/daemon/errors.js';
import { HealthPortError, healthListenError } from '../../src/daemon/health-port-error.js';

// The daemon never imports the CLI: its errors carry their exit code, and the CLI maps them by it.
describe('DaemonError', () => {
  afterEach(() => vi.restoreAllMocks());

  it.each([1, 2] as const)('exits with the code the daemon gave (%i)', (exitCode) => {
    const stderr = vi.spyOn(process.stderr, 'write').mockReturnValue(true);
    expect(reportCliError(new DaemonError('HEALTH_PORT: cannot listen', { exitCode }))).toBe(exitCode);
    expect(stderr).toHaveBeenCalledWith('intake-sync: HEALTH_PORT: cannot listen\n');
  });

  it('a health port already in use is a DaemonError that exits 1, keeping its name and cause', () => {
    vi.spyOn(process.stderr, 'write').mockReturnValue(true);
    const cause = Object.assign(new Error('listen EADDRINUSE'), { code: 'EADDRINUSE' });
    const error = healthListenError(cause, '0.0.0.0', 18182);
    expect(error).toBeInstanceOf(HealthPortError);
    expect(error).toBeInstanceOf(DaemonError);
    expect((error as HealthPortError).name).toBe('HealthPortError');
    expect((error as HealthPortError).cause).toBe(cause);
    expect(reportCliError(error)).toBe(1);
  });
});
