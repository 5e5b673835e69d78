import type postgres from 'postgres';

/**
 * Installs bench_filler_key(tag, n): an identity key in identityKey()'s format (seven normalised fields
 * joined by U+001F) whose first name carries `tag` and n, so filler keys share the real keys' length and
 * btree shape but never match a sandbox identity. The ceiling generates its page's keys with it too.
 */
export async function installFillerKeyFunction(sql: postgres.Sql): Promise<void> {
  await sql`
    create or replace function bench_filler_key(tag text, n int) returns text
    language sql immutable parallel safe as $$
      select concat_ws(chr(31), tag || n, 'lastname' || (n % 9973), 'CA',
                       to_char(date '1940-01-01' + (n % 20000), 'YYYY-MM-DD'), '1234567893',
                       to_char(date '2024-01-01' + (n % 365), 'YYYY-MM-DD'), '00002015204')
    $$`;
}

/**
 * Inserts local prescriptions `tag`-from..to of `feed` set-based (generate_series), then refreshes planner
 * statistics. The match indexes lead with the feed: fillers deepen a feed's lookups only in that feed.
 */
export async function insertFillerPrescriptions(sql: postgres.Sql, tag: string, from: number, to: number, feed: string): Promise<void> {
  if (to < from) return;
  await installFillerKeyFunction(sql);
  await sql`
    insert into intake_sync.prescriptions (feed, external_id, patient_first_name, patient_last_name, patient_state, patient_dob,
                               prescriber_npi, written_date, drug_ndc, identity_key)
    select ${feed}::text, ${tag} || '-' || g, ${tag} || g, 'lastname' || (g % 9973), 'CA',
           to_char(date '1940-01-01' + (g % 20000), 'YYYY-MM-DD'), '1234567893',
           to_char(date '2024-01-01' + (g % 365), 'YYYY-MM-DD'), '00002015204', bench_filler_key(${tag}, g)
    from generate_series(${from}::int, ${to}::int) g`;
  await sql`analyze intake_sync.prescriptions`;
}
