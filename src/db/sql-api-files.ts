import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { splitSqlStatements } from './sql-statements.js';

/** sql/api sits two levels above both src/db and dist/db, like drizzle/. */
export const SQL_API_FOLDER = fileURLToPath(new URL('../../sql/api', import.meta.url));

/** The ledger of the SQL API's files, inside the deployment's schema: which content each object was last created from. */
export const SQL_API_LEDGER_TABLE = '__sql_api_applied';

/** One object of the SQL API: a function or view, as one CREATE OR REPLACE file. */
export interface SqlApiFile {
  /** its path under sql/api, as manifest.txt lists it, e.g. feeds/_require_feed.sql */
  path: string;
  /** sha256 of the file as committed (schema-independent, like a migration's) */
  hash: string;
  /** its statements, still naming the default schema */
  statements: string[];
}

const MANIFEST_LINE = /^[a-z0-9_-]+\/[A-Za-z0-9_.-]+\.sql$/;

/** The manifest's paths in order: one per line, `#` comments and blank lines skipped. Pure. */
export function parseManifest(text: string): string[] {
  const paths: string[] = [];
  const seen = new Set<string>();
  text.split('\n').forEach((raw, index) => {
    const line = raw.replace(/#.*$/, '').trim();
    if (line === '') return;
    if (!MANIFEST_LINE.test(line)) {
      throw new Error(`sql/api/manifest.txt line ${index + 1}: "${line}" is not a <concept>/<name>.sql path`);
    }
    if (seen.has(line)) throw new Error(`sql/api/manifest.txt line ${index + 1}: ${line} is listed twice`);
    seen.add(line);
    paths.push(line);
  });
  return paths;
}

/** Reads sql/api/manifest.txt and each file it lists, in its order. */
export function readSqlApiFiles(folder: string = SQL_API_FOLDER): SqlApiFile[] {
  return parseManifest(readFileSync(`${folder}/manifest.txt`, 'utf8')).map((path) =>
    sqlApiFile(path, readFileSync(`${folder}/${path}`, 'utf8')),
  );
}

/** One file's record from its path and text. Pure. */
export function sqlApiFile(path: string, text: string): SqlApiFile {
  return { path, hash: createHash('sha256').update(text).digest('hex'), statements: splitSqlStatements(text) };
}
