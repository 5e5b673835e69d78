import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root. */
export const REPO = fileURLToPath(new URL('../../../', import.meta.url));

export interface MarkdownFile {
  /** path from the repository root, e.g. docs/sql-api.md */
  path: string;
  text: string;
}

function markdownUnder(dir: string): string[] {
  return readdirSync(join(REPO, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return markdownUnder(path);
    return entry.name.endsWith('.md') ? [path] : [];
  });
}

/** The user documentation: README.md and every page under docs/. */
export function userDocs(): MarkdownFile[] {
  return ['README.md', ...markdownUnder('docs')].sort().map(read);
}

/** Every Markdown file a reader follows links through: the user docs, CONTRIBUTING and CHANGELOG. */
export function allDocs(): MarkdownFile[] {
  return [...userDocs(), read('CONTRIBUTING.md'), read('CHANGELOG.md')];
}

export function read(path: string): MarkdownFile {
  return { path: relative(REPO, join(REPO, path)), text: readFileSync(join(REPO, path), 'utf8') };
}

/** A piece of code in a page: one line of a fenced block, or one inline code span. */
export interface CodeFragment {
  text: string;
  line: number;
}

/** The prose lines (outside fenced blocks) and the code lines (inside), with their line numbers. */
function splitFences(text: string): { prose: CodeFragment[]; fenced: CodeFragment[] } {
  const prose: CodeFragment[] = [];
  const fenced: CodeFragment[] = [];
  let inFence = false;
  text.split('\n').forEach((line, index) => {
    if (/^\s*(```|~~~)/.test(line)) {
      inFence = !inFence;
      return;
    }
    (inFence ? fenced : prose).push({ text: line, line: index + 1 });
  });
  return { prose, fenced };
}

/** Every line of every fenced block and every inline code span of the prose. */
export function codeFragments(text: string): CodeFragment[] {
  const { prose, fenced } = splitFences(text);
  const spans = prose.flatMap(({ text: line, line: n }) => [...line.matchAll(/`([^`]+)`/g)].map((m) => ({ text: m[1]!, line: n })));
  return [...fenced, ...spans];
}

/** The prose without inline code spans (links inside code are examples, not links). */
export function proseLines(text: string): CodeFragment[] {
  return splitFences(text).prose.map(({ text: line, line: n }) => ({ text: line.replace(/`[^`]*`/g, ''), line: n }));
}

/** The rows of every Markdown table in the page, as trimmed cells (a `\|` stays inside its cell). */
export function tableRows(text: string): { cells: string[]; line: number }[] {
  return splitFences(text)
    .prose.filter(({ text: line }) => /^\s*\|.*\|\s*$/.test(line) && !/^\s*\|[\s:|-]+\|\s*$/.test(line))
    .map(({ text: line, line: n }) => ({
      cells: line
        .trim()
        .slice(1, -1)
        .split(/(?<!\\)\|/)
        .map((cell) => cell.trim()),
      line: n,
    }));
}

/** The anchors GitHub gives a page's headings: lowercased, punctuation dropped, spaces to hyphens, repeats numbered. */
export function headingAnchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const { text: line } of splitFences(text).prose) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const base = heading[1]!
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

/** The section of a page under a `## ` heading whose text matches, up to the next `## `. */
export function section(text: string, heading: RegExp): string {
  const lines = text.split('\n');
  const start = lines.findIndex((line) => /^## /.test(line) && heading.test(line));
  if (start < 0) return '';
  const end = lines.findIndex((line, index) => index > start && /^## /.test(line));
  return lines.slice(start, end < 0 ? undefined : end).join('\n');
}
