import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { codeFragments, REPO, userDocs } from '../support/docs/markdown.js';

// The docs are for the people who run intake-sync: no text about how it was built (issue numbers,
// the sessions that worked on it, their branches), no claim the code stopped making (an advisory
// lock it no longer takes), and one way to run the CLI in their shell examples.

const docs = userDocs();

function sourceFiles(dir: string): string[] {
  return readdirSync(join(REPO, dir), { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );
}

/** Where src/ still takes an advisory lock (pg_advisory_*), comments aside. */
const advisoryUses = sourceFiles('src').filter((path) =>
  readFileSync(join(REPO, path), 'utf8')
    .split('\n')
    .some((line) => /pg_(try_)?advisory_/.test(line) && !/^\s*(\/\/|\*)/.test(line)),
);

/** Branch names of this repository other than main (none in a CI clone of main alone). */
function branchNames(): string[] {
  try {
    return execFileSync('git', ['for-each-ref', '--format=%(refname:short)', 'refs/heads'], { cwd: REPO, encoding: 'utf8' })
      .split('\n')
      .filter((name) => name.length >= 6 && name !== 'main' && /^[a-z][a-z0-9-]+$/.test(name) && name.includes('-'));
  } catch {
    return [];
  }
}

/** The paragraphs of a page (blank-line separated), with their first line number. */
function paragraphs(text: string): { text: string; line: number }[] {
  const out: { text: string; line: number }[] = [];
  let start = 0;
  const lines = text.split('\n');
  for (let i = 0; i <= lines.length; i += 1) {
    if (i === lines.length || lines[i]?.trim() === '') {
      if (i > start) out.push({ text: lines.slice(start, i).join('\n'), line: start + 1 });
      start = i + 1;
    }
  }
  return out;
}

const INTERNAL: readonly [string, RegExp][] = [
  ['an issue number', /\bissues? #?\d+/i],
  [
    'the sessions that built it',
    /\b(?:other|helper|agent|parallel|~?\d+) sessions?\b|\bsessions' (?:load|work|test runs)\b|\b(?:filed|written|run) by a session\b/i,
  ],
  ["someone's branch", /\b[a-z][a-z0-9-]*'s branch\b|\biso-[a-z]\b/i],
];

describe('no internal or stale text in README.md and docs/', () => {
  it.each(docs.map((d) => [d.path, d] as const))('%s', (_path, doc) => {
    const found: string[] = [];
    const branches = branchNames();
    for (const { text, line } of paragraphs(doc.text)) {
      for (const [what, pattern] of INTERNAL)
        if (pattern.test(text)) found.push(`${doc.path}:${line}: ${what}: ${pattern.exec(text)?.[0]}`);
      for (const branch of branches)
        if (new RegExp(`(?<![\\w/.-])${branch}(?![\\w.-])`).test(text)) found.push(`${doc.path}:${line}: the branch ${branch}`);
      // an advisory lock is named only where the code still takes one (the first migration of a
      // schema), or as what a lock table replaced
      if (
        /advisory lock/i.test(text) &&
        !(advisoryUses.length > 0 && /migrat|no ledger/i.test(text)) &&
        !/replace|not advisory|old scheme|no longer/i.test(text)
      ) {
        found.push(`${doc.path}:${line}: an advisory lock the code no longer takes`);
      }
    }
    expect(found).toEqual([]);
  });

  it('the code still takes an advisory lock only to migrate a schema with no ledger yet', () => {
    expect(advisoryUses).toEqual(['src/db/migrate.ts']);
  });

  it('shell examples run the CLI one way: npx intake-sync', () => {
    const bare = docs.flatMap(({ path, text }) =>
      codeFragments(text)
        .filter((fragment) => fragment.text.includes('\n'))
        .flatMap((fragment) =>
          fragment.text
            .split('\n')
            .map((code, i) => ({ code, line: fragment.line + i }))
            .filter(({ code }) => /^\s*(?:\$ )?(?:[A-Z_][A-Z0-9_]*=\S*\s+)*intake-sync /.test(code))
            .map(({ code, line }) => `${path}:${line}: ${code.trim()}`),
        ),
    );
    expect(bare).toEqual([]);
  });
});
