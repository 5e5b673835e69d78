import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { identityOf, samplePrescription } from '../../../src/sandbox/fixtures.js';
import { NEEDS_POSTGRES, postgresReachable } from '../../support/db.js';
import { FEED_A, FEED_B, type TwoClinics, twoClinics } from '../../support/sql-api/two-clinics.js';

// Issue 33 §4: a cursor an app holds counts nothing of another feed. Each feed has its own clock, so
// an app of clinic-a sees its cursor move by one per clinic-a commit whatever clinic-b committed in
// between, and the cursor names no other feed. A v1 cursor (the global clock before 0030) is still
// accepted as the same position in every feed.
const real = await postgresReachable();

describe.skipIf(!real)(`status_changes_since cursors are per feed (${NEEDS_POSTGRES})`, () => {
  let c: TwoClinics;
  const statusOf = async (feed: string, k: number, status: string, rank: number) => {
    const p = samplePrescription(k, { prefix: feed });
    await c.owner`update intake_sync.prescriptions set status = ${status}, status_rank = ${rank} where feed = ${feed} and external_id = ${p.external_id}`;
  };
  beforeAll(async () => {
    c = await twoClinics('cursor_per_feed');
    for (const feed of [FEED_A, FEED_B]) {
      for (let k = 1; k <= 3; k++) {
        const p = samplePrescription(k, { prefix: feed });
        await c.owner`select intake_sync.register_prescription(${p.external_id}, ${JSON.stringify(identityOf(p))}::text::jsonb, ${feed})`;
      }
    }
  });
  afterAll(async () => {
    await c?.close();
  });

  it("an app's cursor moves by one per commit of its feed, whatever another feed committed meanwhile", async () => {
    const app = c.as();
    const since = (cursor: string | null) =>
      app<{ cursor: string; external_id: string }[]>`select cursor, external_id from intake_sync.status_changes_since(${cursor}, 100)`;
    await statusOf(FEED_A, 1, 'accepted', 1);
    const [first] = await since(null);
    // clinic-b commits 7 times, clinic-a once
    for (let i = 0; i < 7; i++) await statusOf(FEED_B, (i % 3) + 1, i % 2 === 0 ? 'accepted' : 'ordered', i % 2 === 0 ? 1 : 2);
    await statusOf(FEED_A, 2, 'accepted', 1);
    const next = await since(first?.cursor ?? null);
    expect(next.map((r) => r.external_id)).toEqual([samplePrescription(2, { prefix: FEED_A }).external_id]);
    const parse = (cursor: string | undefined) => /^v2:clinic-a\.(\d+)\.(\d+)$/.exec(cursor ?? '');
    const [, seq1, n1] = parse(first?.cursor) ?? [];
    const [, seq2, n2] = parse(next[0]?.cursor) ?? [];
    expect([n1, n2]).toEqual(['1', '1']);
    expect(Number(seq2) - Number(seq1)).toBe(1);
    expect(next[0]?.cursor).not.toContain(FEED_B);
    // caught up: nothing more, and a cursor of clinic-b's positions changes nothing for clinic-a's app
    expect(await since(next[0]?.cursor ?? null)).toEqual([]);
  });

  it('a v1 cursor (before 0030) is still a position in every feed; a malformed one is refused', async () => {
    const all = await c.owner<{ cursor: string }[]>`select cursor from intake_sync.status_changes_since(null, 100)`;
    expect(await c.owner<{ cursor: string }[]>`select cursor from intake_sync.status_changes_since('v1:0:0', 100)`).toEqual(all);
    // the owner sees both feeds: each row's cursor carries both positions, and resuming walks the rest once
    expect(all.at(-1)?.cursor).toMatch(/^v2:clinic-a\.\d+\.\d+,clinic-b\.\d+\.\d+$/);
    const half = all[Math.floor(all.length / 2)]?.cursor ?? null;
    const rest = await c.owner<{ cursor: string }[]>`select cursor from intake_sync.status_changes_since(${half}, 100)`;
    expect(rest).toEqual(all.slice(Math.floor(all.length / 2) + 1));
    for (const bad of ['v2:', 'v2:clinic-a.1', 'v2:Clinic.1.1', `v2:${'a'.repeat(65)}.1.1`, 'v2:a.1.1;drop']) {
      const code = await c.owner`select * from intake_sync.status_changes_since(${bad}, 10)`.then(
        () => 'ok',
        (e: { code?: string }) => e.code,
      );
      expect(code, bad).toBe('22023');
    }
  });
});
