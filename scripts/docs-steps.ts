// For scripts/run-docs.sh: writes the executed steps of the given markdown files into DIR, one file
// per step (NNN.sh) and DIR/steps.tsv (index, kind, timeout seconds, file:line, script file), or
// exits 2 naming the file and line of a bad marker. Usage: node --import tsx scripts/docs-steps.ts DIR FILE...
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DocBlocksError, extractDocSteps } from '../test/support/docs/doc-blocks.js';

const [dir, ...files] = process.argv.slice(2);
if (!dir || files.length === 0) {
  process.stderr.write('usage: docs-steps.ts DIR FILE...\n');
  process.exit(2);
}
try {
  const rows: string[] = [];
  let index = 0;
  for (const file of files) {
    for (const step of extractDocSteps(readFileSync(file, 'utf8'), file)) {
      index += 1;
      const script = join(dir, `${String(index).padStart(3, '0')}.sh`);
      writeFileSync(script, step.script);
      rows.push([index, step.kind, step.timeoutSeconds, `${step.file}:${step.line}`, script].join('\t'));
    }
  }
  writeFileSync(join(dir, 'steps.tsv'), rows.length > 0 ? `${rows.join('\n')}\n` : '');
} catch (error) {
  if (!(error instanceof DocBlocksError)) throw error;
  process.stderr.write(`run-docs: ${error.message}\n`);
  process.exit(2);
}
