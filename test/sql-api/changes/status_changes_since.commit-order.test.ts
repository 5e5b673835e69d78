import postgres from 'postgres';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { followStatusChanges } from '../../../src/api/change-follower.js';
import type { StatusChange } from '../../../src/api/status-change.js';
import { createTestDatabase, NEEDS_POSTGRES, postgresReachable, type TestDatabase } from '../../support/db.js';
import { waitFor } from '../../support/wait-for.js';

const onPostgres = await postgresReachable();
const TOTAL_CHANGES = 10_000;
const WRITERS = 4;
const PRESCRIPTIONS = 400;
const APP_NAME = `changes-follower-test-${process.pid}`;

let tdb: TestDatabase;

beforeAll(async () => {
  if (!onPostgres) return;
  tdb = await createTestDatabase('sql_api_changes_concurrency');
  await tdb.database.sql!.unsafe(`insert into intake_sync.prescriptions (external_id, patient_first_name, patient_last_name, patient_state,
      patient_dob, prescriber_npi, written_date, drug_ndc, identity_key)
    select 'rx-' || g, 'First', 'Last', 'NY', '1990-01-01', '1234567893', '2024-12-01', '00002015204', 'key-' || g
    from generate_series(1, ${PRESCRIPTIONS}) g`);
});
afterAll(async () => {
  await tdb?.drop();
});

/** Deterministic pseudo-random numbers (mulberry32), so a failure can be replayed. */
function prng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Round {
  /** transaction labels in the order they began and wrote */
  started: string[];
  /** the order their COMMITs returned, when they were issued one at a time; null when issued together */
  committed: string[] | null;
}

/**
 * Each round, every writer begins a transaction and updates its own slice of prescriptions (the
 * new status is the transaction's label, so each change names its writer), in writer order; then
 * they commit in another order: reversed or shuffled and one at a time (so the true commit order
 * is known), or all at once (so commits race through the commit lock).
 */
async function writeRounds(url: string, random: () => number): Promise<{ rounds: Round[]; sizes: Map<string, number> }> {
  const writers = Array.from({ length: WRITERS }, () => postgres(url, { max: 1, onnotice: () => {} }));
  const rounds: Round[] = [];
  const sizes = new Map<string, number>();
  let remaining = TOTAL_CHANGES;
  try {
    for (let r = 0; remaining > 0; r++) {
      const started: string[] = [];
      let offset = 0;
      for (let w = 0; w < WRITERS && remaining > 0; w++) {
        const size = Math.min(remaining, 1 + Math.floor(random() * 30));
        const label = `r${r}w${w}`;
        await writers[w]!.unsafe('begin');
        await writers[w]!.unsafe(
          `update intake_sync.prescriptions set status = '${label}' where id between ${offset + 1} and ${offset + size}`,
        );
        started.push(label);
        sizes.set(label, size);
        offset += size;
        remaining -= size;
      }
      const indexes = started.map((_, i) => i);
      if (r % 4 === 3) {
        await Promise.all(indexes.map((i) => writers[i]!.unsafe('commit')));
        rounds.push({ started, committed: null });
        continue;
      }
      // the first to begin and write commits last at least every other round
      const order = r % 2 === 0 ? indexes.reverse() : indexes.sort(() => random() - 0.5);
      for (const i of order) await writers[i]!.unsafe('commit');
      rounds.push({ started, committed: order.map((i) => started[i]!) });
    }
  } finally {
    await Promise.all(writers.map((w) => w.end({ timeout: 5 })));
  }
  return { rounds, sizes };
}

test.skipIf(!onPostgres)(
  `10,000 changes from writers committing out of order, a follower reading meanwhile and losing its connection: none skipped, none repeated, commit order kept (${NEEDS_POSTGRES})`,
  async () => {
    const url = tdb.url!;
    const admin = tdb.database.sql!;
    const stop = new AbortController();
    const received: StatusChange[] = [];
    let reconnects = 0;
    const following = (async () => {
      for await (const change of followStatusChanges({
        url,
        since: null,
        signal: stop.signal,
        batchSize: 100,
        pollIntervalMs: 50,
        applicationName: APP_NAME,
        backoff: { baseMs: 20, capMs: 200 },
        onReconnect: () => (reconnects += 1),
      })) {
        received.push(change);
      }
    })();

    try {
      const writing = writeRounds(url, prng(9));
      // terminate the follower's session while writers are still committing
      await waitFor(() => received.length >= 3_000, { timeoutMs: 120_000, what: 'the follower to read 3,000 changes' });
      const [terminated] = await admin<{ n: number }[]>`
        select count(pg_terminate_backend(pid))::int as n from pg_stat_activity where application_name = ${APP_NAME}`;
      expect(terminated?.n).toBe(1);
      const { rounds, sizes } = await writing;
      // everything is committed: wait until the follower has yielded the last change the table holds
      const table = await admin<{ cursor: string }[]>`select cursor from intake_sync.status_changes_since(null, 10000)`;
      expect(table).toHaveLength(TOTAL_CHANGES);
      const lastCursor = table.at(-1)!.cursor;
      await waitFor(() => received.some((c) => c.cursor === lastCursor), {
        timeoutMs: 120_000,
        what: 'the follower to reach the last change',
      });

      expect(reconnects).toBeGreaterThanOrEqual(1);
      expect(rounds.filter((r) => r.committed && r.committed[r.committed.length - 1] === r.started[0]).length).toBeGreaterThan(10);

      // 0 repeated, 0 skipped
      const keys = received.map((c) => `${c.external_id}/${c.new_status}`);
      expect(new Set(received.map((c) => c.cursor)).size).toBe(received.length);
      expect(new Set(keys).size).toBe(received.length);
      expect(received).toHaveLength(TOTAL_CHANGES);
      for (const [label, size] of sizes)
        expect(
          received.filter((c) => c.new_status === label),
          label,
        ).toHaveLength(size);

      // commit order: each transaction's changes together, transactions in the order they committed
      const feedOrder: string[] = [];
      for (const change of received) if (feedOrder.at(-1) !== change.new_status) feedOrder.push(change.new_status);
      expect(feedOrder).toHaveLength(sizes.size);
      let at = 0;
      for (const round of rounds) {
        const seen = feedOrder.slice(at, at + round.started.length);
        if (round.committed) expect(seen).toEqual(round.committed);
        else expect([...seen].sort()).toEqual([...round.started].sort());
        at += round.started.length;
      }
      // within one transaction, changes come in prescription order (the trigger's insert order)
      for (let i = 1; i < received.length; i++) {
        const [a, b] = [received[i - 1]!, received[i]!];
        if (a.new_status === b.new_status) expect(Number(b.external_id.slice(3))).toBeGreaterThan(Number(a.external_id.slice(3)));
      }
    } finally {
      stop.abort();
      await following;
    }
  },
  300_000,
);
