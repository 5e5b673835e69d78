import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { DEFAULT_SCHEMA } from './schema/store-schema.js';

/** drizzle/ sits two levels above both src/db and dist/db. */
export const MIGRATIONS_FOLDER = fileURLToPath(new URL('../../drizzle', import.meta.url));

/** One migration as drizzle-kit wrote it. */
export interface MigrationFile {
  /** the journal tag, e.g. 0000_intake_sync_schema */
  tag: string;
  /** sha256 of the file as committed (schema-independent, so every deployment records the same) */
  hash: string;
  /** the journal's creation time, ms */
  createdAt: number;
  /** its statements, still naming the default schema */
  statements: string[];
}

interface Journal {
  entries: { tag: string; when: number }[];
}

/** Reads drizzle/meta/_journal.json and each migration it lists, in order. */
export function readMigrationFiles(folder: string = MIGRATIONS_FOLDER): MigrationFile[] {
  const journal = JSON.parse(readFileSync(`${folder}/meta/_journal.json`, 'utf8')) as Journal;
  return journal.entries.map((entry) => {
    const text = readFileSync(`${folder}/${entry.tag}.sql`, 'utf8');
    return {
      tag: entry.tag,
      hash: createHash('sha256').update(text).digest('hex'),
      createdAt: entry.when,
      statements: text.split('--> statement-breakpoint').filter((s) => s.trim() !== ''),
    };
  });
}

const DEFAULT_SCHEMA_TOKEN = new RegExp(`"${DEFAULT_SCHEMA}"|'${DEFAULT_SCHEMA}'`, 'g');

/**
 * A migration statement for the deployment's schema. drizzle-kit writes every name qualified
 * as "intake_sync"."x" (the schema object in schema.ts); hand-written SQL API migrations follow
 * the same rule, and write the schema as the text literal 'intake_sync' where they need it as a
 * value (a notification channel, an advisory lock key). Both forms are replaced. Schema names are
 * validated plain identifiers, so the replacement cannot change a statement's shape.
 */
export function forSchema(statement: string, schema: string): string {
  return statement.replace(DEFAULT_SCHEMA_TOKEN, (token) => (token.startsWith('"') ? `"${schema}"` : `'${schema}'`));
}
