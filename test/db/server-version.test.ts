import { describe, expect, it } from 'vitest';
import { assertSupportedServer, MIN_SERVER_MAJOR, serverVersionProblem } from '../../src/db/server-version.js';
import { createTestDatabase, postgresReachable } from '../support/db.js';

describe('serverVersionProblem', () => {
  it.each([
    [90624, '9.6.24', 'PostgreSQL 9.6.24 (server_version_num 90624)'],
    [120022, '12.22', 'PostgreSQL 12.22 (server_version_num 120022)'],
    [130021, '13.21 (Debian 13.21-1)', 'PostgreSQL 13.21 (Debian 13.21-1) (server_version_num 130021)'],
  ])('refuses %i naming the version found and the range supported', (num, version, named) => {
    const problem = serverVersionProblem(num, version);
    expect(problem).toContain(named);
    expect(problem).toContain('supports PostgreSQL 14 to 18');
  });

  it.each([
    [140000, '14.0'],
    [150014, '15.14'],
    [180004, '18.4'],
    [190000, '19devel'],
  ])('accepts %i', (num, version) => {
    expect(serverVersionProblem(num, version)).toBeUndefined();
  });

  it.each([Number.NaN, 0, -1])('refuses an unreadable version (%s)', (num) => {
    expect(serverVersionProblem(num, '?')).toMatch(/could not read the server's version/);
  });

  it('the oldest supported major is 14', () => {
    expect(MIN_SERVER_MAJOR).toBe(14);
  });
});

describe('assertSupportedServer', async () => {
  const real = await postgresReachable();
  it.skipIf(!real)('accepts the server the tests run on', async () => {
    const tdb = await createTestDatabase('server-version');
    try {
      await expect(assertSupportedServer(tdb.database)).resolves.toBeUndefined();
    } finally {
      await tdb.drop();
    }
  });
});
