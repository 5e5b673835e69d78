import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { intakeClientFor } from '../../src/config/intake-client.js';
import { ResponseTooLargeError } from '../../src/intake/errors/response-too-large-error.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [relative(ROOT, path)] : [];
  });
}

describe('one constructor of an IntakeClient from configuration', () => {
  it('no command, the daemon or the console builds its own (outside the contract room)', () => {
    const builders = sourceFiles(join(ROOT, 'src'))
      .filter((path) => !path.startsWith('src/intake/') && path !== 'src/config/intake-client.ts')
      .filter((path) => /new IntakeClient\(/.test(readFileSync(join(ROOT, path), 'utf8')));
    expect(builders, 'build it with intakeClientFor (src/config/intake-client.ts)').toEqual([]);
  });

  describe('against a real socket', () => {
    let server: Server;
    let baseUrl: string;
    beforeAll(async () => {
      // an operator whose valid, empty page is 64 KiB (padded with whitespace): bigger than the cap below
      server = createServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(`${JSON.stringify({ events: [], meta: { limit: 1, iterator: 'x', done: true } })}${' '.repeat(65_536)}`);
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/intake_api/2024-12-10`;
    });
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

    it('carries MAX_RESPONSE_BYTES: an answer past it is refused, unread', async () => {
      const client = intakeClientFor(
        { HTTP_TIMEOUT_MS: 15_000, MAX_RESPONSE_BYTES: 4_096 },
        { baseUrl, apiKey: 'k', apiSecret: 's' },
        { retry: { retries: 0 } },
      );
      await expect(client.listEvents({ limit: 1 })).rejects.toBeInstanceOf(ResponseTooLargeError);
    });

    it('with a cap above the answer, the same client reads it', async () => {
      const client = intakeClientFor(
        { HTTP_TIMEOUT_MS: 15_000, MAX_RESPONSE_BYTES: 1_048_576 },
        { baseUrl, apiKey: 'k', apiSecret: 's' },
        { retry: { retries: 0 } },
      );
      await expect(client.listEvents({ limit: 1 })).resolves.toMatchObject({ meta: { done: true } });
    });
  });
});
