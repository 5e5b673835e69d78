import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { describe, it } from 'vitest';
import { createEmptyDatabase } from './db.js';
import { useLoginRoles } from './login-roles.js';
import { spawnChild } from './child-process.js';
import { testRunId } from './test-run.js';

// A fixture, not a check of its own: test/process/test-run-teardown.test.ts starts a vitest on this
// file alone with INTAKE_SYNC_INTERRUPT_READY set, waits for the file it names, then interrupts the
// run (Ctrl-C) while this test holds a database, a role and a process, and checks none is left.
const ready = process.env.INTAKE_SYNC_INTERRUPT_READY;
const role = `interrupted_${randomBytes(3).toString('hex')}`;

describe.skipIf(!ready)('a run interrupted mid-test (fixture of test/process/test-run-teardown.test.ts)', () => {
  useLoginRoles([role]);

  it('holds a database, a role and a process until it is interrupted', async () => {
    const db = await createEmptyDatabase('interrupted');
    const child = spawnChild(process.execPath, ['-e', 'setInterval(() => {}, 60_000)'], {
      cwd: process.cwd(),
      env: { PATH: process.env.PATH ?? '' },
    });
    const database = new URL(db.url).pathname.slice(1);
    writeFileSync(ready ?? '', JSON.stringify({ run: testRunId(), database, role, pid: child.pid }));
    // held until the run is interrupted: what the teardown must clean is all in place now
    await child.exited;
  }, 600_000);
});
