import { mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { BenchResults } from './report.js';
import { REPO_ROOT } from './processes.js';

/** Writes `<dir>/<YYYY-MM-DD>.json` (dir relative to the repo root); returns its path. */
export async function writeResultsFile(dir: string, results: BenchResults, summary: unknown): Promise<string> {
  const folder = resolve(REPO_ROOT, dir);
  await mkdir(folder, { recursive: true });
  const path = join(folder, `${results.started_at.slice(0, 10)}.json`);
  await writeFile(path, `${JSON.stringify({ summary, ...results }, null, 2)}\n`);
  return path;
}
