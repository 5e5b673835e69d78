import { describe, expect, test } from 'vitest';
import { isConnectionLoss } from '../../src/db/connection-loss.js';

describe('isConnectionLoss', () => {
  test.each([
    [{ code: 'CONNECTION_CLOSED' }, true],
    [{ code: 'CONNECTION_DESTROYED' }, true],
    [{ code: 'CONNECTION_ENDED' }, true],
    [{ code: 'CONNECT_TIMEOUT' }, true],
    [{ code: 'ECONNRESET' }, true],
    [{ code: 'ECONNREFUSED' }, true],
    [{ code: 'EPIPE' }, true],
    [{ code: '57P01', severity: 'FATAL' }, true], // pg_terminate_backend: admin_shutdown
    [{ code: '57P02' }, true], // crash_shutdown
    [{ code: '57P03' }, true], // cannot_connect_now (server starting)
    [{ code: '08006' }, true], // connection_failure
    [{ code: 'XX000', severity: 'PANIC' }, true],
    [{ code: '23505', severity: 'ERROR' }, false], // unique violation: the session lives
    [{ code: '40001', severity: 'ERROR' }, false], // serialization failure
    [{ code: '57014', severity: 'ERROR' }, false], // query_canceled (statement timeout): the session lives
    [new Error('plain'), false],
    [null, false],
    ['CONNECTION_CLOSED', false],
  ])('%o -> %s', (error, expected) => {
    expect(isConnectionLoss(error)).toBe(expected);
  });
});
