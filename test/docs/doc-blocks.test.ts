import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { extractDocSteps } from '../support/docs/doc-blocks.js';
import { REPO } from '../support/docs/markdown.js';

// The extractor of scripts/run-docs.sh (issue 27 §2): marked blocks only, in order, with their line;
// a marker that would silently skip a step is an error naming file and line.

const md = (...lines: string[]) => lines.join('\n');

describe('extractDocSteps', () => {
  test('runs marked sh blocks, starts background ones, stops; skips unmarked and non-shell blocks', () => {
    const text = md(
      '# Title',
      '```sh',
      'echo prose example',
      '```',
      '<!-- ci: background -->',
      '```sh',
      'npm start',
      '```',
      '',
      '<!-- ci: run timeout=30 -->',
      '',
      '```bash',
      'curl -sf localhost:8080/readyz',
      'echo two',
      '```',
      '<!-- ci: stop -->',
      '```',
      '<!-- ci: run -->',
      'a marker inside a fence is text',
      '```',
      '<!-- ci: run -->',
      '````sh',
      '```inner```',
      '````',
    );
    expect(extractDocSteps(text, 'g.md')).toEqual([
      { kind: 'background', file: 'g.md', line: 5, script: 'npm start\n', timeoutSeconds: 0 },
      { kind: 'run', file: 'g.md', line: 10, script: 'curl -sf localhost:8080/readyz\necho two\n', timeoutSeconds: 30 },
      { kind: 'stop', file: 'g.md', line: 16, script: '', timeoutSeconds: 20 },
      { kind: 'run', file: 'g.md', line: 21, script: '```inner```\n', timeoutSeconds: 120 },
    ]);
  });

  test.each([
    [md('<!-- ci: runn -->', '```sh', 'x', '```'), 'g.md:1: unknown ci directive "runn"'],
    [md('x', '<!-- ci: run -->', 'text', '```sh', 'x', '```'), 'g.md:2: ci: run must be followed by a sh block (found text)'],
    [md('<!-- ci: run -->', '```sql', 'select 1;', '```'), 'g.md:1: ci: run must be followed by a sh block (found ```sql)'],
    [md('<!-- ci: run -->', '<!-- ci: run -->'), 'g.md:1: ci: run must be followed by a sh block (found another marker)'],
    [md('<!-- ci: background -->'), 'g.md:1: ci: background must be followed by a sh block (found the end of the file)'],
    [md('<!-- ci: run timeout=0 -->', '```sh', 'x', '```'), 'g.md:1: unknown option "timeout=0"'],
    [md('<!-- ci: background timeout=5 -->', '```sh', 'x', '```'), 'g.md:1: unknown option "timeout=5"'],
    [md('<!-- ci: run -->', '```sh', 'x'), 'g.md:2: a fence that is never closed'],
  ])('refuses, naming file and line: %#', (text, message) => {
    expect(() => extractDocSteps(text, 'g.md')).toThrow(message);
  });

  test('README.md and docs/getting-started.md parse, and the guide runs steps (the executed-docs job has work)', () => {
    const readme = extractDocSteps(readFileSync(join(REPO, 'README.md'), 'utf8'), 'README.md');
    const guide = extractDocSteps(readFileSync(join(REPO, 'docs/getting-started.md'), 'utf8'), 'docs/getting-started.md');
    expect(readme.length + guide.length).toBeGreaterThan(5);
    // every background step is stopped by a later stop step
    for (const steps of [readme, guide]) {
      const lastBackground = steps.map((s) => s.kind).lastIndexOf('background');
      const lastStop = steps.map((s) => s.kind).lastIndexOf('stop');
      expect(lastStop).toBeGreaterThanOrEqual(lastBackground);
    }
  });
});
