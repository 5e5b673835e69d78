import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { nonEmpty } from '../../../intake/fields.js';
import { prescriptionIdentityRequestSchema } from '../../../intake/identity.js';
import { describeIssues } from '../../../sync/apply/classify-event.js';
import type { LocalPrescriptionInput } from '../../../sync/matching/local-prescriptions.js';

/** One line of a prescriptions import file. */
export const importLineSchema = z.object({
  external_id: nonEmpty,
  prescription_identity: prescriptionIdentityRequestSchema,
});

export interface ImportBadLine {
  /** 1-based line number in the file */
  line: number;
  /** the failing paths and rules; never the values (they can be PHI) */
  error: string;
}

export interface ParsedImport {
  good: Array<LocalPrescriptionInput & { line: number }>;
  bad: ImportBadLine[];
}

/** Parses NDJSON text: blank lines ignored, each bad line reported, good lines kept. */
export function parsePrescriptionImport(text: string): ParsedImport {
  const good: ParsedImport['good'] = [];
  const bad: ImportBadLine[] = [];
  const firstLineOf = new Map<string, number>();
  text.split(/\r?\n/).forEach((content, index) => {
    const line = index + 1;
    if (content.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(content);
    } catch {
      // the parser's message quotes the input, which can be PHI
      bad.push({ line, error: 'not valid JSON' });
      return;
    }
    const parsed = importLineSchema.safeParse(value);
    if (!parsed.success) {
      bad.push({ line, error: describeIssues(parsed.error.issues, '(line)') });
      return;
    }
    const earlier = firstLineOf.get(parsed.data.external_id);
    if (earlier !== undefined) {
      bad.push({ line, error: `external_id: repeats line ${earlier}` });
      return;
    }
    firstLineOf.set(parsed.data.external_id, line);
    good.push({ line, external_id: parsed.data.external_id, prescription_identity: parsed.data.prescription_identity });
  });
  return { good, bad };
}

/** Reads and parses an NDJSON import file. */
export async function readPrescriptionImport(path: string): Promise<ParsedImport> {
  return parsePrescriptionImport(await readFile(path, 'utf8'));
}
