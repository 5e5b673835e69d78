import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// `npm test` leaves no role behind, even after Ctrl-C: the global teardown drops the roles that
// carry its run id (test/support/test-run.ts). So every role a test creates on the shared server
// is tagged right after its `create role`, by roleTagStatement or tagForRun.

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Roles made on a throwaway cluster of the test's own, which goes away whole. */
const OWN_CLUSTER: Record<string, string> = {
  'test/console/password-auth.test.ts': 'a scram-sha-256 cluster the test starts and removes',
  'test/db/tls-connection.test.ts': 'a TLS server the test starts and removes',
};

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return files(path);
    return entry.name.endsWith('.ts') ? [relative(ROOT, path)] : [];
  });
}

describe('test roles carry the run id', () => {
  it('every test file that creates a role on the shared server tags it', () => {
    const creating = files(join(ROOT, 'test')).filter(
      (path) =>
        !path.startsWith('test/support/') && !path.startsWith('test/layout/') && /create role/.test(readFileSync(join(ROOT, path), 'utf8')),
    );
    expect(creating.length).toBeGreaterThan(10);
    const untagged = creating.filter((path) => {
      if (path in OWN_CLUSTER) return false;
      const source = readFileSync(join(ROOT, path), 'utf8');
      const created = (source.match(/create role/g) ?? []).length;
      const tagged = (source.match(/roleTagStatement\(|tagForRun\('role'/g) ?? []).length;
      return tagged < created;
    });
    expect(untagged, 'tag each role after its create role (roleTagStatement, test/support/test-run.ts)').toEqual([]);
  });
});
