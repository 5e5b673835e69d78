import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';
import { allDocs, headingAnchors, proseLines, REPO, read } from '../support/docs/markdown.js';

// Pages link each other instead of repeating themselves, so a moved page or a renamed heading must
// not leave a reader at a dead link.

describe('links between the docs', () => {
  it('every relative link points at a file that exists, and at a heading that exists', () => {
    const problems = allDocs().flatMap(({ path, text }) =>
      proseLines(text).flatMap(({ text: line, line: n }) =>
        [...line.matchAll(/\]\(([^)\s]+)\)/g)]
          .map((m) => m[1]!)
          .filter((target) => !/^[a-z]+:/i.test(target))
          .flatMap((target) => {
            const [file = '', anchor] = target.split('#');
            const resolved = file === '' ? path : normalize(join(dirname(path), file));
            if (!existsSync(join(REPO, resolved))) return [`${path}:${n}: ${target}: no file ${resolved}`];
            if (anchor === undefined || !resolved.endsWith('.md') || statSync(join(REPO, resolved)).isDirectory()) return [];
            const anchors = headingAnchors(readFileSync(join(REPO, resolved), 'utf8'));
            return anchors.has(anchor) ? [] : [`${path}:${n}: ${target}: no heading #${anchor} in ${resolved}`];
          }),
      ),
    );
    expect(problems).toEqual([]);
  });

  it('the README stays a front door: at most 200 lines', () => {
    expect(read('README.md').text.trimEnd().split('\n').length).toBeLessThanOrEqual(200);
  });
});
