import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { EmptyDatabase } from '../db.js';

const FIXTURES = fileURLToPath(new URL('../../db/fixtures/legacy-0.1/', import.meta.url));
/** The three migrations of 0.1 with their journal times, as drizzle's migrator recorded them. */
const LEGACY = [
  ['0000_init.sql', 1795279363318],
  ['0001_prescriptions_fillfactor.sql', 1795280327554],
  ['0002_events_raw_json.sql', 1795280503321],
] as const;

/** A 0.1 install exactly as drizzle's migrator made it: tables in public, rows in drizzle's shared ledger. */
export async function installLegacy(empty: EmptyDatabase): Promise<void> {
  await empty.sql.unsafe(`create schema drizzle;
    create table drizzle.__drizzle_migrations (id serial primary key, hash text not null, created_at bigint);
    insert into drizzle.__drizzle_migrations (hash, created_at) values ('vendor-app-hash', 1600000000000);`);
  for (const [file, when] of LEGACY) {
    const text = readFileSync(`${FIXTURES}${file}`, 'utf8');
    for (const statement of text.split('--> statement-breakpoint')) await empty.sql.unsafe(statement);
    const hash = createHash('sha256').update(text).digest('hex');
    await empty.sql`insert into drizzle.__drizzle_migrations (hash, created_at) values (${hash}, ${when})`;
  }
}
