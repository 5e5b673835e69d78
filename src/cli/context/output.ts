import { terminalSafe, terminalSafeJson } from '../../lib/terminal-text.js';

/** A printable cell: null and undefined print as `-`. */
export type Cell = string | number | boolean | null | undefined;

/** A cell as printed: `-` for nothing, stored text with its control characters escaped (terminalSafe). */
export function cellText(value: Cell): string {
  return value === null || value === undefined || value === '' ? '-' : terminalSafe(String(value));
}

/** Writes one object as a single JSON line on stdout (the `--json` contract). */
export function printJson(value: unknown): void {
  process.stdout.write(`${terminalSafeJson(JSON.stringify(value))}\n`);
}

/** Writes `label  value` lines with the values aligned. */
export function printFields(fields: ReadonlyArray<readonly [label: string, value: Cell]>): void {
  const width = Math.max(0, ...fields.map(([label]) => label.length));
  for (const [label, value] of fields) process.stdout.write(`${terminalSafe(label).padEnd(width)}  ${cellText(value)}\n`);
}

/** Writes rows as aligned columns under a header; the columns are the keys of `columns`, in order. */
export function printTable<K extends string>(columns: readonly K[], rows: ReadonlyArray<Record<K, Cell>>): void {
  const texts = rows.map((row) => columns.map((column) => cellText(row[column])));
  const header = columns.map((column) => terminalSafe(column));
  const widths = header.map((column, i) => Math.max(column.length, ...texts.map((cells) => cells[i]?.length ?? 0)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, i) => cell.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  process.stdout.write(`${line(header)}\n`);
  for (const cells of texts) process.stdout.write(`${line(cells)}\n`);
}
