import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grantStatements } from '../../../src/db/grants.js';
import { NEEDS_POSTGRES, postgresReachable } from '../../support/db.js';
import { FEED_A, twoClinics, type TwoClinics } from '../../support/sql-api/two-clinics.js';
import { roleTagStatement } from '../../support/test-run.js';

// Issue 33 §5: a malformed finding's key was sha256:<hex of its body>, shown in quarantine_open, the
// console's URLs and audit subjects, so an app could confirm a guessed body (a DOB in 84 ms). The key
// is now keyed with a per-database secret only the owner reads; the runtime role derives keys
// through _finding_key(); an application role can do neither.

const reachable = await postgresReachable();

describe.skipIf(!reachable)(`a malformed finding's key is keyed with a secret (${reachable ? 'real PostgreSQL' : NEEDS_POSTGRES})`, () => {
  let clinics: TwoClinics;
  const runtime = `fk_runtime_${randomBytes(3).toString('hex')}`;
  const body = '{"name":"accepted","patient_dob":"1984-03-07"}';
  const digest = `sha256:${createHash('sha256').update(body).digest('hex')}`;

  beforeAll(async () => {
    clinics = await twoClinics('finding_key');
    await clinics.owner.unsafe(`create role "${runtime}" login`);
    await clinics.owner.unsafe(roleTagStatement(runtime));
    await clinics.owner.unsafe(grantStatements('runtime', 'intake_sync', runtime).join('\n'));
    // the worker's insert, as the runtime role (page-statement.ts keys a row without an id the same way)
    const sql = clinics.as(runtime);
    await sql`insert into intake_sync.quarantine (quarantine_key, feed, reason, detail, raw)
      values (intake_sync._finding_key(${digest}), ${FEED_A}, 'malformed', '(event): event_id missing', ${body}::jsonb)`;
  }, 60_000);
  afterAll(async () => {
    await clinics.owner.unsafe(`drop owned by "${runtime}"; drop role if exists "${runtime}"`).catch(() => {});
    await clinics?.close();
  });

  it("the app reads a key that is not the body's digest, and cannot derive one from a guess", async () => {
    const app = clinics.as();
    const [finding] = await app<{ quarantine_key: string }[]>`select quarantine_key from intake_sync.quarantine_open`;
    expect(finding?.quarantine_key).toMatch(/^k:[0-9a-f]{64}$/);
    expect(finding?.quarantine_key).not.toContain(digest.slice(7));
    await expect(app`select intake_sync._finding_key(${digest})`).rejects.toMatchObject({ code: '42501' });
    await expect(app`select secret from intake_sync.finding_key_secret`).rejects.toMatchObject({ code: '42501' });
  });

  it('the runtime role derives keys but cannot read the secret; the same body gets the same key', async () => {
    const sql = clinics.as(runtime);
    const [again] = await sql<{ key: string }[]>`select intake_sync._finding_key(${digest}) as key`;
    const [stored] = await clinics.owner<{ quarantine_key: string }[]>`select quarantine_key from intake_sync.quarantine`;
    expect(again?.key).toBe(stored?.quarantine_key);
    await expect(sql`select secret from intake_sync.finding_key_secret`).rejects.toMatchObject({ code: '42501' });
  });

  it('the key is of the database: another database gives the same body another key', async () => {
    const other = await twoClinics('finding_key_b');
    try {
      const [there] = await other.owner<{ key: string }[]>`select intake_sync._finding_key(${digest}) as key`;
      const [here] = await clinics.owner<{ key: string }[]>`select intake_sync._finding_key(${digest}) as key`;
      expect(there?.key).toMatch(/^k:[0-9a-f]{64}$/);
      expect(there?.key).not.toBe(here?.key);
    } finally {
      await other.close();
    }
  }, 60_000);
});
