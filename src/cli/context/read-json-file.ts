import { readFile } from 'node:fs/promises';
import type { z } from 'zod';
import { schemaIssuesFrom } from '../../intake/errors/schema-issues.js';
import { plainRule } from '../../lib/plain-rule.js';
import { terminalSafe } from '../../lib/terminal-text.js';
import { CliUsageError } from './errors.js';

/**
 * Reads a JSON file and validates it. Any failure is a CliUsageError naming the
 * file and each bad field path with its rule, never the values (they may be PHI).
 */
export async function readJsonFile<S extends z.ZodType>(path: string, schema: S, label: string): Promise<z.output<S>> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    const reason = code === 'ENOENT' ? 'no such file' : typeof code === 'string' ? code : 'unreadable';
    throw new CliUsageError(`cannot read ${label} file ${terminalSafe(path)}: ${reason}`, { cause: error });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    // no cause: SyntaxError messages quote the file content
    throw new CliUsageError(`${label} file ${terminalSafe(path)} is not valid JSON`);
  }
  const parsed = schema.safeParse(json, { error: plainRule });
  if (parsed.success) return parsed.data;
  const shown = terminalSafe(path);
  throw new CliUsageError(
    schemaIssuesFrom(parsed.error).map((issue) => `${label} file ${shown}: ${issue.path}: ${issue.message} (nothing sent)`),
  );
}
