// The population of `npm run bench:console` (issue 29 §8), set-based so a million events load in
// a minute: two feeds, `events` events over a year; every ninth event held (no prescription matched)
// and quarantined, one finding in eleven of those resolved, one in twenty malformed (no event id);
// a fifth as many prescriptions as events, each with its subscription, two status changes and
// (half of them) a delivered send; a few thousand pending sends; an audit trail of console actions.
import type postgres from 'postgres';

export const FEEDS = ['clinic_a', 'clinic_b'] as const;
const NAMES = `array['accepted','ordered','dispensed','delivered','delivered','rejected','accepted','ordered']`;
const STATUSES = `array['accepted','ordered','dispensed','delivered','delivered','delivered','delivered','rejected']`;
const RANKS = `array[1,2,3,4,4,4,4,5]`;
const feedOf = (n: string) => `case when ${n} % 2 = 0 then 'clinic_a' else 'clinic_b' end`;

/** What the seed made, for the bench's requests. */
export interface Seeded {
  events: number;
  openFindings: number;
  resolvedFindings: number;
  prescriptions: number;
}

/** Loads the population into a migrated, empty database (statistics untouched: no ANALYZE). */
export async function seedConsole(sql: postgres.Sql, events: number): Promise<Seeded> {
  const prescriptions = Math.max(10, Math.floor(events / 5));
  // event i (1..events): feed i % 2, 30 s apart, ending now; held when i % 9 = 0
  const at = (n: string) => `now() - (${events} - ${n}) * interval '30 seconds'`;
  await sql.unsafe(`
    insert into intake_sync.prescriptions (id, external_id, feed, subscription_id, status, status_rank, status_occurred_at, created_at, updated_at)
    select k + 1, 'rx-' || k, ${feedOf('k')}, 'sub-' || k, (${STATUSES})[1 + k % 8], (${RANKS})[1 + k % 8],
      now() - make_interval(hours => k % 8000), now() - make_interval(hours => 24 + k % 8000), now() - make_interval(hours => k % 8000)
    from generate_series(0, ${prescriptions - 1}) k`);
  await sql.unsafe(`select setval(pg_get_serial_sequence('intake_sync.prescriptions', 'id'), ${prescriptions})`);
  await sql.unsafe(`
    insert into intake_sync.events (id, feed, name, occurred_at, subscription_id, api_version, raw, identity_key, status_rank, prescription_id, received_at)
    select 'ev-' || i, ${feedOf('i')}, (${NAMES})[1 + (i / 9) % 8], ${at('i')},
      case when i % 9 = 0 then 'sub-h-' || (i % 30000) else 'sub-' || (i % ${prescriptions}) end,
      '2024-12-10', case when i % 9 = 0 then json_build_object('id', 'ev-' || i) end, 'idk-' || (i % 50000), null,
      case when i % 9 = 0 then null else (i % ${prescriptions}) + 1 end, ${at('i')} + interval '2 seconds'
    from generate_series(1, ${events}) i`);
  // finding j holds event 9j
  const findings = Math.floor(events / 9);
  await sql.unsafe(`
    insert into intake_sync.quarantine (quarantine_key, event_id, feed, reason, detail, raw, first_seen_at, last_seen_at, seen_count, resolved_at)
    select case when j % 20 = 0 then 'sha256:' || md5('ev-' || 9 * j) else 'ev-' || 9 * j end,
      case when j % 20 = 0 then null else 'ev-' || 9 * j end, ${feedOf('9 * j')},
      case when j % 20 = 0 then 'malformed' when j % 4 = 1 then 'ambiguous' else 'unmatched' end,
      case when j % 20 = 0 then 'occurred_at: not a timestamp' when j % 4 = 1 then 'two prescriptions match' else 'no prescription matched' end,
      jsonb_build_object('id', 'ev-' || 9 * j, 'name', (${NAMES})[1 + j % 8], 'subscription_id', 'sub-h-' || (9 * j % 30000)),
      ${at('9 * j')}, ${at('9 * j')} + make_interval(mins => j % 600), 1 + j % 3,
      case when j % 11 = 0 then ${at('9 * j')} + interval '1 day' end
    from generate_series(1, ${findings}) j`);
  await sql.unsafe(`
    insert into intake_sync.subscription_links (feed, subscription_id, prescription_id, event_id, linked_at)
    select ${feedOf('k')}, 'sub-' || k, k + 1, 'ev-' || (k + 1), now() - make_interval(hours => 24 + k % 8000)
    from generate_series(0, ${prescriptions - 1}) k`);
  await sql.unsafe(`
    insert into intake_sync.status_changes (prescription_id, external_id, feed, previous_status, new_status, event_id, occurred_at, changed_at)
    select k + 1, 'rx-' || k, ${feedOf('k')}, case when s = 0 then null else 'accepted' end,
      case when s = 0 then 'accepted' else (${STATUSES})[1 + k % 8] end, 'ev-' || (k + 1 + s),
      now() - make_interval(hours => k % 8000 + 10 * (1 - s)), now() - make_interval(hours => k % 8000 + 10 * (1 - s))
    from generate_series(0, ${prescriptions - 1}) k, generate_series(0, 1) s`);
  await sql.unsafe(`
    insert into intake_sync.outbox (feed, external_id, kind, state, completed_at, created_at)
    select ${feedOf('k')}, 'rx-' || k, 'send', case when k % 100 = 1 then 'pending' else 'delivered' end,
      case when k % 100 = 1 then null else now() - make_interval(hours => 24 + k % 8000) end, now() - make_interval(hours => 25 + k % 8000)
    from generate_series(0, ${prescriptions - 1}) k where k % 2 = 0 or k % 100 = 1`);
  await sql.unsafe(`
    insert into intake_sync.audit_entries (at, actor, action, feed, subject, detail)
    select now() - make_interval(mins => 10 * a), 'operator_' || (a % 7),
      (array['quarantine.dismissed','quarantine.resolved','quarantine.reveal_requested','feed.reset'])[1 + a % 4],
      ${feedOf('a')}, 'ev-' || (9 * a), '{}'::jsonb
    from generate_series(1, ${Math.floor(findings / 2)}) a`);
  const [open] = await sql<{ open: number; resolved: number }[]>`
    select count(*) filter (where resolved_at is null)::int as open, count(*) filter (where resolved_at is not null)::int as resolved
    from intake_sync.quarantine`;
  return { events, openFindings: open?.open ?? 0, resolvedFindings: open?.resolved ?? 0, prescriptions };
}
