import { existsSync, readFileSync } from 'node:fs';

/** One row of the reliability table. */
export interface TrialRow {
  scenario: string;
  /** faults applied or runs made (kills, restarts, injected events...), as the scenario counts them */
  trials: number;
  lost: number;
  duplicated: number;
  result: 'pass' | 'fail' | 'skip';
  note?: string;
}

/** Reads the NDJSON rows the scenarios appended (missing file: no rows). */
export function readTrialRows(file: string): TrialRow[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim())
    .map((line) => JSON.parse(line) as TrialRow)
    .sort((a, b) => a.scenario.localeCompare(b.scenario, 'en', { numeric: true }));
}

/** The Markdown table for the "The fault suite" section of docs/guarantees.md. */
export function formatSummary(rows: readonly TrialRow[]): string {
  const header = ['Scenario', 'Trials', 'Lost', 'Duplicated', 'Result', 'Notes'];
  const body = rows.map((r) => [r.scenario, String(r.trials), String(r.lost), String(r.duplicated), r.result, r.note ?? '']);
  const line = (cells: string[]) => `| ${cells.map((c) => c.replace(/\|/g, '\\|')).join(' | ')} |`;
  return `${[line(header), line(header.map(() => '---')), ...body.map(line)].join('\n')}\n`;
}
