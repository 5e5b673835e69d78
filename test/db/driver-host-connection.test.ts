import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createPostgresClient } from '../../src/db/postgres-client.js';
import { NEEDS_POSTGRES, postgresReachable } from '../support/db.js';

// The host TLS is decided for is the host the client connects to: libpq's ?host= socket directory
// (which postgres.js alone would send to the server as a setting) reaches the local server's socket.
const SOCKET_DIR = '/var/run/postgresql';
const skip = !(await postgresReachable()) || !existsSync(`${SOCKET_DIR}/.s.PGSQL.5432`);
if (skip) console.warn(`driver-host-connection: skipped: ${NEEDS_POSTGRES} with a socket in ${SOCKET_DIR}`);

describe.skipIf(skip)('a URL with ?host=<socket directory> connects there', () => {
  it('connects over the Unix socket (plaintext: loopback), whatever PGHOST says', async () => {
    const sql = createPostgresClient(
      `postgres:///postgres?host=${encodeURIComponent(SOCKET_DIR)}`,
      { max: 1, username: 'postgres', onnotice: () => {} },
      { variable: 'DATABASE_URL', pgHost: 'db.invalid' },
    );
    try {
      const [row] = await sql<{ addr: string | null }[]>`select inet_client_addr()::text as addr`;
      // a Unix-socket session has no client address
      expect(row?.addr).toBeNull();
    } finally {
      await sql.end();
    }
  });
});
