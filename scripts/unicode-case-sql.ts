/**
 * Prints the Unicode sections of drizzle/0002_api_register.sql: SQL twins of JavaScript's
 * String.prototype.trim, toLowerCase and toUpperCase, as the worker's identityKey() uses them.
 *
 *   node --import tsx scripts/unicode-case-sql.ts
 *
 * Why tables and not Postgres's lower()/upper(): those follow the database's collation (a "C"
 * database lowercases ASCII only, glibc and ICU differ from each other and from JavaScript on
 * hundreds of characters) and btrim() trims spaces only. The mappings below are read from the
 * running Node's own behaviour, character by character, so they are JavaScript's by construction;
 * test/sql-api/registration/identity_key.parity.test.ts checks every code point against the Node running it.
 * The migration is immutable once released: when a Node upgrade brings new Unicode data and the
 * exhaustive test fails, the new mappings go into a new migration that replaces the functions.
 */

const MAX_CODE_POINT = 0x10ffff;
const SIGMA = 0x03a3;
const FINAL_SIGMA = 'ς';

function* codePoints(): Generator<number> {
  for (let c = 0; c <= MAX_CODE_POINT; c++) if (c < 0xd800 || c > 0xdfff) yield c;
}

const hex = (c: number) => (c > 0xffff ? `\\U${c.toString(16).padStart(8, '0')}` : `\\u${c.toString(16).padStart(4, '0')}`);
/** an E'' string literal of these characters, every one escaped: the migration stays ASCII */
const literal = (text: string) => `E'${[...text].map((ch) => hex(ch.codePointAt(0) as number)).join('')}'`;
/**
 * an E'' literal of a jsonb object, non-ASCII as JSON \\u escapes (surrogate pairs beyond the BMP);
 * E'' so that the text is the same whatever standard_conforming_strings says
 */
const jsonbLiteral = (value: Record<string, string>) =>
  `E'${JSON.stringify(value)
    .replace(/[\u0080-\uffff]/g, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`)
    .replaceAll('\\', '\\\\')}'::jsonb`;

/** Bracket expression of a regular expression (Postgres ARE escapes, doubled for an E'' literal). */
function bracket(set: readonly number[]): string {
  const parts: string[] = [];
  for (let i = 0; i < set.length; ) {
    let j = i;
    while (j + 1 < set.length && set[j + 1] === (set[j] as number) + 1) j++;
    const from = set[i] as number;
    const to = set[j] as number;
    parts.push(to === from ? hex(from) : `${hex(from)}-${hex(to)}`);
    i = j + 1;
  }
  return `[${parts.join('').replaceAll('\\', '\\\\')}]`;
}

/** Every non-ASCII character the conversion changes, with what it becomes (one character or several). */
function caseMap(convert: (s: string) => string): Record<string, string> {
  const map: Record<string, string> = {};
  for (const c of codePoints()) {
    const from = String.fromCodePoint(c);
    const to = convert(from);
    if (to === from) continue;
    if (convert(to) !== to) throw new Error(`U+${c.toString(16)}: its mapping is not a fixed point`);
    if (c < 0x80) {
      // ASCII goes through lower()/upper() under the "C" collation, which change a-z/A-Z only
      if (!/^[A-Za-z]$/.test(from) || to.length !== 1 || to.charCodeAt(0) >= 0x80)
        throw new Error(`unexpected ASCII mapping U+${c.toString(16)}`);
      continue;
    }
    map[from] = to;
  }
  return map;
}

/** JavaScript's whitespace: what trim() removes and /\s/ matches (the test checks they are one set). */
function whitespace(): number[] {
  const set: number[] = [];
  for (const c of codePoints()) {
    const ch = String.fromCodePoint(c);
    const trims = ch.trim() === '';
    if (trims !== /\s/.test(ch)) throw new Error(`U+${c.toString(16)}: trim() and \\s disagree`);
    if (trims) set.push(c);
  }
  return set;
}

/**
 * The Final_Sigma context as toLowerCase() applies it, measured: `cased` characters make a
 * following capital sigma final and a preceding one not; `ignorable` ones are skipped over.
 */
function sigmaContext(): { cased: number[]; ignorable: number[] } {
  const cased: number[] = [];
  const ignorable: number[] = [];
  const lowerEndsFinal = (s: string) => s.toLowerCase().endsWith(FINAL_SIGMA);
  for (const c of codePoints()) {
    if (c === SIGMA) {
      cased.push(c);
      continue;
    }
    const ch = String.fromCodePoint(c);
    const before = lowerEndsFinal(`${ch}Σ`);
    const skipped = lowerEndsFinal(`Α${ch}Σ`);
    const blocksAfter = !`ΑΣ${ch}`.toLowerCase().startsWith(`α${FINAL_SIGMA}`);
    if (before) {
      if (!blocksAfter) throw new Error(`U+${c.toString(16)}: cased before a sigma but not after it`);
      cased.push(c);
    } else if (skipped) {
      // skipped before: it must be skipped after too (ΑΣ<c>Α keeps a medial sigma)
      if (blocksAfter || !`ΑΣ${ch}Α`.toLowerCase().startsWith('ασ')) throw new Error(`U+${c.toString(16)}: ignorable one way only`);
      ignorable.push(c);
    } else if (blocksAfter) {
      throw new Error(`U+${c.toString(16)}: blocks a final sigma after it but is not cased before it`);
    }
  }
  return { cased, ignorable };
}

function main(): void {
  const ws = whitespace();
  const lower = caseMap((s) => s.toLowerCase());
  const upper = caseMap((s) => s.toUpperCase());
  const { cased, ignorable } = sigmaContext();
  const several = (map: Record<string, string>) => Object.values(map).filter((to) => [...to].length > 1).length;
  const sigma = '\\\\u03a3';
  const finalSigma = `(?<=${bracket(cased)}${bracket(ignorable)}*)${sigma}(?!${bracket(ignorable)}*${bracket(cased)})`;
  const out: string[] = [];
  out.push(
    `-- generated by scripts/unicode-case-sql.ts on Node ${process.versions.node} (ICU ${process.versions.icu}, Unicode ${process.versions.unicode}):`,
  );
  out.push(
    `-- ${ws.length} whitespace code points; toLowerCase changes ${Object.keys(lower).length} non-ASCII characters (${several(lower)} into several),`,
  );
  out.push(
    `-- toUpperCase ${Object.keys(upper).length} (${several(upper)} into several); the final sigma context has ${cased.length} cased and ${ignorable.length} ignorable characters`,
  );
  out.push(`WHITESPACE ${literal(String.fromCodePoint(...ws))}`);
  out.push(`FINAL_SIGMA E'${finalSigma}'`);
  out.push(`LOWER_MAP ${jsonbLiteral(lower)}`);
  out.push(`UPPER_MAP ${jsonbLiteral(upper)}`);
  process.stdout.write(`${out.join('\n')}\n`);
}

main();
