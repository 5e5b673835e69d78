import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { envSchema } from '../../src/config/config.js';
import { feedEntrySchema } from '../../src/config/feeds-file.js';
import { REPO, read, section, tableRows } from '../support/docs/markdown.js';

// docs/configuration.md is the reference of every variable: this keeps it true to the zod schema
// (src/config/config.ts) and to the FEEDS_FILE reader, so a variable cannot be added, renamed or given
// another default without the page saying so.
const page = read('docs/configuration.md').text;

/** Rows whose first cell is one backticked name matching `name`: name -> the default cell. */
function documented(text: string, name: RegExp): Map<string, { defaultCell: string; line: number }[]> {
  const rows = new Map<string, { defaultCell: string; line: number }[]>();
  for (const { cells, line } of tableRows(text)) {
    const key = /^`([^`]+)`$/.exec(cells[0] ?? '')?.[1];
    if (!key || !name.test(key)) continue;
    rows.set(key, [...(rows.get(key) ?? []), { defaultCell: cells[1] ?? '', line }]);
  }
  return rows;
}

/** The value a variable takes when unset, as the page writes it; undefined: no default. */
function defaultOf(key: string): string | undefined {
  const field = envSchema.shape[key as keyof typeof envSchema.shape];
  const parsed = field.safeParse(undefined);
  return parsed.success && parsed.data !== undefined ? String(parsed.data) : undefined;
}

const variables = Object.keys(envSchema.shape).sort();
const rows = documented(page, /^[A-Z][A-Z0-9_]*$/);

describe('docs/configuration.md and the environment schema', () => {
  it('lists every variable of src/config/config.ts once', () => {
    const missing = variables.filter((key) => !rows.has(key));
    const repeated = [...rows].filter(([, at]) => at.length > 1).map(([key]) => key);
    expect(missing, 'variables with no row in docs/configuration.md').toEqual([]);
    expect(repeated, 'variables with more than one row').toEqual([]);
  });

  it('lists nothing the schema does not read', () => {
    const unknown = [...rows.keys()].filter((key) => !variables.includes(key));
    expect(unknown, 'rows naming a variable src/config/config.ts does not have').toEqual([]);
  });

  it.each(variables)('%s: the default column says the default', (key) => {
    const cell = rows.get(key)?.[0]?.defaultCell;
    if (cell === undefined) return; // reported by the first test
    const value = defaultOf(key);
    if (value === undefined) expect(cell, `${key} has no default: its cell starts with "unset"`).toMatch(/^unset\b/);
    else {
      // the cell shows the value as a user writes it (`30d`); it must parse to the same default
      const written = /^`([^`]*)`$/.exec(cell)?.[1];
      expect(written, `${key}: the default cell is one backticked value`).toBeDefined();
      const field = envSchema.shape[key as keyof typeof envSchema.shape];
      expect(field.safeParse(written).data, `${key} defaults to ${value}`).toEqual(field.safeParse(undefined).data);
    }
  });

  it('.env.example mentions every variable', () => {
    const example = readFileSync(join(REPO, '.env.example'), 'utf8');
    const missing = variables.filter((key) => !new RegExp(`^#?\\s*${key}=`, 'm').test(example));
    expect(missing, 'variables .env.example does not show').toEqual([]);
  });
});

describe('docs/configuration.md and the FEEDS_FILE reader', () => {
  const keys = Object.keys(feedEntrySchema({}).shape).sort();
  const feedRows = documented(section(page, /FEEDS_FILE/), /^[a-z][a-z0-9_]*$/);

  it('the FEEDS_FILE section lists exactly the keys of a feed entry', () => {
    expect([...feedRows.keys()].sort()).toEqual(keys);
  });
});
