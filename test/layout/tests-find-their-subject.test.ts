import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  hasLogic,
  helperProblems,
  parseWhereTested,
  subjectProblems,
  type Tree,
  WAIT_FOR_HOME,
  WHERE_TESTED_HEADING,
  waitForProblems,
} from '../support/layout/test-subjects.js';

// Tests find their subject (CONTRIBUTING.md, "Tests mirror src"): the test of src/x/y.ts is
// test/x/y.test.ts, the test of sql/api/<concept>/<name>.sql is test/sql-api/<concept>/<name>.test.ts,
// or CONTRIBUTING.md names the tests that exercise the file; helpers live in test/support/, with one waitFor.

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

function filesUnder(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? filesUnder(path) : [relative(ROOT, join(ROOT, path))];
  });
}

function repositoryTree(): Tree {
  const paths = [...filesUnder('src'), ...filesUnder('test'), ...filesUnder('bench'), ...filesUnder('sql/api')];
  return new Map(paths.filter((path) => /\.(ts|sql)$/.test(path)).map((path) => [path, readFileSync(join(ROOT, path), 'utf8')]));
}

describe('tests find their subject', () => {
  const tree = repositoryTree();
  const listed = parseWhereTested(readFileSync(join(ROOT, 'CONTRIBUTING.md'), 'utf8'));

  it('every src file with logic and every SQL API file is tested at its mirror, or CONTRIBUTING.md names tests that reach it', () => {
    expect(listed.size, `CONTRIBUTING.md has its "${WHERE_TESTED_HEADING}" list`).toBeGreaterThan(0);
    expect(subjectProblems(tree, listed)).toEqual([]);
  });

  it('test helpers live only under test/support/', () => {
    expect(helperProblems(filesUnder('test'))).toEqual([]);
  });

  it(`there is one waitFor, in ${WAIT_FOR_HOME}`, () => {
    expect(waitForProblems(tree)).toEqual([]);
  });
});

describe('the rules refuse a planted violation', () => {
  const contributing = (lines: string[]) => `# Contributing\n\n${WHERE_TESTED_HEADING}\n\n${lines.join('\n')}\n\n## Next\n`;
  const logic = 'export function decide(n: number): number {\n  return n + 1;\n}\n';
  const base: [string, string][] = [
    ['src/room/mirrored.ts', logic],
    ['test/room/mirrored.test.ts', "import { decide } from '../../src/room/mirrored.js';\n"],
    ['src/room/types.ts', 'export interface Shape {\n  on: (event: string) => void;\n}\nexport const LIMIT = 3;\n'],
    ['src/room/reached.ts', logic],
    ['src/room/entry.ts', "import { decide } from './reached.js';\nexport const run = () => decide(1);\n"],
    ['test/cli/run.test.ts', "spawn('node', ['--import', 'tsx', 'src/room/entry.ts']);\n"],
    ['sql/api/feeds/pause_feed.sql', 'create function pause_feed() ...'],
    ['test/sql-api/feeds/pause_feed.test.ts', "select intake_sync.pause_feed('x')"],
    [WAIT_FOR_HOME, 'export async function waitFor() {}\n'],
  ];
  const listedOk = parseWhereTested(
    contributing(['- `src/room/reached.ts`: `test/cli/run.test.ts`', '- `src/room/entry.ts`: `test/cli/run.test.ts`']),
  );
  const planted = (...extra: [string, string][]): Tree => new Map([...base, ...extra]);

  it('a clean tree passes, and types and constants need no test', () => {
    expect(hasLogic(base[2]![1])).toBe(false);
    expect(hasLogic(logic)).toBe(true);
    expect(subjectProblems(planted(), listedOk)).toEqual([]);
    expect(waitForProblems(planted())).toEqual([]);
  });

  it('refuses a src file with logic and neither a mirror nor a line', () => {
    expect(subjectProblems(planted(['src/room/new-rule.ts', logic]), listedOk)).toEqual([
      'src/room/new-rule.ts: no test at its mirror; write its test at test/room/new-rule.test.ts, or add "- `src/room/new-rule.ts`: `test/….test.ts`" under' +
        ` "${WHERE_TESTED_HEADING}" in CONTRIBUTING.md`,
    ]);
  });

  it('refuses a listed test that does not reach the file, does not exist, or a stale line', () => {
    const listed = parseWhereTested(
      contributing([
        '- `src/room/reached.ts`: `test/room/mirrored.test.ts`',
        '- `src/room/entry.ts`: `test/room/gone.test.ts`',
        '- `src/room/mirrored.ts`: `test/room/mirrored.test.ts`',
        '- `src/room/types.ts`: `test/room/mirrored.test.ts`',
        '- `src/room/moved.ts`: `test/room/mirrored.test.ts`',
      ]),
    );
    expect(subjectProblems(planted(), listed)).toEqual([
      'src/room/entry.ts: listed test test/room/gone.test.ts does not exist',
      'src/room/mirrored.ts: has its mirror test/room/mirrored.test.ts; remove its line from CONTRIBUTING.md',
      'src/room/moved.ts: listed in CONTRIBUTING.md but does not exist; remove or rename its line',
      'src/room/reached.ts: listed test test/room/mirrored.test.ts never imports, runs or calls it',
      'src/room/types.ts: listed in CONTRIBUTING.md but holds no logic; remove its line',
    ]);
  });

  it('refuses a SQL API file without its test at test/sql-api/<concept>/<name>.test.ts', () => {
    expect(subjectProblems(planted(['sql/api/triage/dismiss.sql', 'create function dismiss() ...']), listedOk)).toEqual([
      'sql/api/triage/dismiss.sql: no test at its mirror; write its test at test/sql-api/triage/dismiss.test.ts, or add' +
        ' "- `sql/api/triage/dismiss.sql`: `test/….test.ts`"' +
        ` under "${WHERE_TESTED_HEADING}" in CONTRIBUTING.md`,
    ]);
  });

  it("a SQL API file is reached by a call by name, and a trigger by its concept's SQL API tests", () => {
    const trigger = ['sql/api/feeds/feed_stamp_trigger.sql', 'CREATE OR REPLACE TRIGGER "feed_stamp" BEFORE INSERT ON feeds'] as [
      string,
      string,
    ];
    const called = ['sql/api/feeds/_feed_check.sql', 'create function _feed_check() ...'] as [string, string];
    const listed = (test: string) =>
      parseWhereTested(contributing([`- \`${trigger[0]}\`: \`${test}\``, `- \`${called[0]}\`: \`${test}\``]));
    const tree = planted(
      trigger,
      called,
      ['sql/api/feeds/pause_feed.sql', 'begin perform _feed_check(); end'],
      ['test/cli/run.test.ts', ''],
    );
    expect(subjectProblems(tree, listed('test/sql-api/feeds/pause_feed.test.ts')).filter((p) => p.startsWith('sql/'))).toEqual([]);
    expect(subjectProblems(tree, listed('test/cli/run.test.ts')).filter((p) => p.startsWith('sql/'))).toEqual([
      'sql/api/feeds/_feed_check.sql: listed test test/cli/run.test.ts never imports, runs or calls it',
      'sql/api/feeds/feed_stamp_trigger.sql: listed test test/cli/run.test.ts never imports, runs or calls it',
    ]);
  });

  it('refuses a helper outside test/support/', () => {
    expect(
      helperProblems(['test/support/db.ts', 'test/room/a.test.ts', 'test/process/helpers/fleet.ts', 'test/db/fixtures/a.sql']),
    ).toEqual(['test/process/helpers/fleet.ts: a helper outside test/support/; move it there (git mv) and fix its imports']);
  });

  it('refuses a second waitFor, and a missing one', () => {
    expect(waitForProblems(planted(['test/faults/harness/wait-for.ts', 'export async function waitFor<T>() {}\n']))).toEqual([
      `test/faults/harness/wait-for.ts: defines its own waitFor; import the one in ${WAIT_FOR_HOME}`,
    ]);
    expect(waitForProblems(new Map([['bench/poll.ts', 'const waitFor = async () => {};\n']]))).toEqual([
      `bench/poll.ts: defines its own waitFor; import the one in ${WAIT_FOR_HOME}`,
      `${WAIT_FOR_HOME}: no waitFor defined`,
    ]);
  });
});
