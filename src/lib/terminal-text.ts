// Stored text reaches the operator's terminal through every CLI table and line: an application's
// `intake_sync.actor`, an external_id, an operator's error text. A control character in it could
// print a fake line (newline, carriage return) or drive the terminal (ESC, CSI sequences, C1), and a
// bidirectional override can reorder what is shown. Every such character is shown as an escape.

// C0 controls, DEL, C1 controls, the line and paragraph separators, and the bidi embeddings,
// overrides and isolates (U+202A-U+202E, U+2066-U+2069)
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is this regex's purpose
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069\\]/g;
const NAMED: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t', '\u001b': '\\e', '\\': '\\\\' };

function escapeOne(char: string): string {
  const named = NAMED[char];
  if (named !== undefined) return named;
  const code = char.codePointAt(0) ?? 0;
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u{${code.toString(16)}}`;
}

/**
 * Text safe to print on a terminal: every control character (C0, DEL, C1), line separator and bidi
 * control is written as a visible escape (`\n`, `\e`, `\x9b`, `\u{202e}`), and a backslash as `\\`,
 * so an escape shown is never mistaken for one stored. Everything else is unchanged.
 */
export function terminalSafe(text: string): string {
  return text.replace(UNSAFE, escapeOne);
}

// the same characters minus the backslash
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is this regex's purpose
const CONTROLS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * A line we composed, its outside values already passed through terminalSafe: any control character
 * left (one a caller did not escape) is written as an escape too, backslashes stay as composed.
 */
export function controlsEscaped(line: string): string {
  return line.replace(CONTROLS, escapeOne);
}

// the same characters minus the backslash: JSON escapes those itself
const JSON_UNSAFE = /[\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * JSON text (from JSON.stringify, which already escapes C0 controls) with DEL, C1 controls, line
 * separators and bidi controls also written as `\uXXXX`: the same value to a parser, inert on a terminal.
 */
export function terminalSafeJson(json: string): string {
  return json.replace(JSON_UNSAFE, (char) => `\\u${(char.codePointAt(0) ?? 0).toString(16).padStart(4, '0')}`);
}
