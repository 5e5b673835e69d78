/**
 * Splits SQL text into its statements at the semicolons outside quotes, quoted identifiers,
 * dollar-quoted bodies and comments, so a file holding CREATE OR REPLACE FUNCTION ... $$ ... $$;
 * followed by its REVOKE and COMMENT runs statement by statement on every driver (PGlite and
 * the extended protocol take one statement per query). Pure.
 */
export function splitSqlStatements(text: string): string[] {
  const statements: string[] = [];
  let start = 0;
  let i = 0;
  while (i < text.length) {
    const next = skipQuoted(text, i);
    if (next > i) {
      i = next;
      continue;
    }
    if (text[i] === ';') {
      statements.push(text.slice(start, i + 1));
      start = i + 1;
    }
    i++;
  }
  statements.push(text.slice(start));
  return statements.filter((s) => stripComments(s).trim() !== '');
}

/** Where a quoted or commented span starting at `at` ends (exclusive); `at` when none starts there. */
function skipQuoted(text: string, at: number): number {
  const c = text[at];
  if (c === '-' && text[at + 1] === '-') return endOf(text, '\n', at + 2, 1);
  if (c === '/' && text[at + 1] === '*') return endOf(text, '*/', at + 2, 2);
  if (c === '"') return endOf(text, '"', at + 1, 1);
  if (c === "'") {
    let i = at + 1;
    while (i < text.length) {
      if (text[i] === "'" && text[i + 1] === "'") i += 2;
      else if (text[i] === "'") return i + 1;
      else i++;
    }
    return text.length;
  }
  if (c === '$') {
    const tag = /^\$(?:[A-Za-z_][A-Za-z0-9_]*)?\$/.exec(text.slice(at, at + 66))?.[0];
    if (tag) return endOf(text, tag, at + tag.length, tag.length);
  }
  return at;
}

function endOf(text: string, closer: string, from: number, width: number): number {
  const found = text.indexOf(closer, from);
  return found < 0 ? text.length : found + width;
}

function stripComments(statement: string): string {
  return statement.replace(/--[^\n]*/g, '').replace(/\/\*[\s\S]*?\*\//g, '');
}
