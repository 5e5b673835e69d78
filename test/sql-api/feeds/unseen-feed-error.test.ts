import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { identityOf, samplePrescription } from '../../../src/sandbox/fixtures.js';
import { NEEDS_POSTGRES, postgresReachable } from '../../support/db.js';
import { FEED_B, type TwoClinics, twoClinics } from '../../support/sql-api/two-clinics.js';

// Issue 25 §7: an app role cannot tell a feed that exists but is not its own from one that does not
// exist: both are 42501 with the same message, hint and column. An unrestricted role (the runtime,
// the owner) still hears that a feed is not configured (42704): it may see every feed anyway.
const reachable = await postgresReachable();
const MISSING = 'clinic-zz';
const rx = samplePrescription(1, { prefix: 'unseen' });

const CALLS: [string, string, unknown[]][] = [
  [
    'register_prescription',
    'select * from intake_sync.register_prescription($1, $2::text::jsonb, $3)',
    [rx.external_id, JSON.stringify(identityOf(rx))],
  ],
  ['send_prescription', 'select intake_sync.send_prescription($1::text::jsonb, $2)', [JSON.stringify(rx)]],
  ['cancel_prescription', 'select intake_sync.cancel_prescription($1, $2)', [rx.external_id]],
];
const FEED_FIRST: [string, string, unknown[]][] = [
  ['show_quarantined', 'select * from intake_sync.show_quarantined($1, $2)', ['e1']],
  ['dismiss_quarantined', 'select intake_sync.dismiss_quarantined($1, $2, $3)', ['e1', 'not_ours']],
  ['resolve_quarantined', 'select * from intake_sync.resolve_quarantined($1, $2, $3)', ['e1', rx.external_id]],
];

interface Refusal {
  code: string;
  message: string;
  hint: string | undefined;
  column: string | undefined;
}

describe.skipIf(!reachable)(`a feed an app role cannot see (${reachable ? 'real PostgreSQL' : NEEDS_POSTGRES})`, () => {
  let db: TwoClinics;
  beforeAll(async () => {
    db = await twoClinics('unseen_feed');
  });
  afterAll(async () => {
    await db?.close();
  });

  const refusal = async (statement: Promise<unknown>, feed: string): Promise<Refusal> => {
    const error = await statement.then(
      () => undefined,
      (e: { code: string; message: string; hint?: string; column_name?: string }) => e,
    );
    expect(error, 'refused').toBeDefined();
    const e = error as { code: string; message: string; hint?: string; column_name?: string };
    // the feed the caller named may appear (it is the caller's own input); nothing else may differ
    return { code: e.code, message: e.message.replaceAll(feed, '<feed>'), hint: e.hint, column: e.column_name };
  };

  it.each([
    ...CALLS.map(([name, sql, args]) => [name, sql, (feed: string) => [...args, feed]] as const),
    ...FEED_FIRST.map(([name, sql, args]) => [name, sql, (feed: string) => [feed, ...args]] as const),
  ])('%s: another feed and a feed that does not exist get the same 42501', async (_name, statement, args) => {
    const app = db.as();
    const existing = await refusal(app.unsafe(statement, args(FEED_B) as never[]), FEED_B);
    const missing = await refusal(app.unsafe(statement, args(MISSING) as never[]), MISSING);
    expect(existing.code).toBe('42501');
    expect(missing).toEqual(existing);
    expect(existing.column).toBe('feed');
  });

  it('the owner (unrestricted) still hears that a feed is not configured: 42704', async () => {
    const [name, statement, args] = CALLS[2] as (typeof CALLS)[number];
    await expect(db.owner.unsafe(statement, [...args, MISSING] as never[]), name).rejects.toMatchObject({ code: '42704' });
  });

  it('nothing was written by the refused calls', async () => {
    const [counts] = await db.owner`select (select count(*) from intake_sync.prescriptions)::int as p,
      (select count(*) from intake_sync.outbox)::int as o`;
    expect(counts).toEqual({ p: 0, o: 0 });
  });
});
