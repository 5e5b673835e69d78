import { describe, expect, test } from 'vitest';
import { terminalSafe, terminalSafeJson } from '../../src/lib/terminal-text.js';

describe('terminalSafe', () => {
  test.each([
    ['plain text', 'rx-1001 delivered', 'rx-1001 delivered'],
    ['accents and other scripts stay', 'Zoë 東京 ✓', 'Zoë 東京 ✓'],
    ['newline: no fake second line', 'rx-1\n2026-01-01 purge.run clinic-b', 'rx-1\\n2026-01-01 purge.run clinic-b'],
    ['carriage return', 'a\rb', 'a\\rb'],
    ['tab', 'a\tb', 'a\\tb'],
    ['ESC colour sequence', '\u001b[31mred\u001b[0m', '\\e[31mred\\e[0m'],
    ['NUL and BEL', '\u0000\u0007', '\\x00\\x07'],
    ['DEL', 'a\u007fb', 'a\\x7fb'],
    ['C1 CSI', '\u009b2J', '\\x9b2J'],
    ['C1 NEL', 'a\u0085b', 'a\\x85b'],
    ['line separator', 'a\u2028b', 'a\\u{2028}b'],
    ['paragraph separator', 'a\u2029b', 'a\\u{2029}b'],
    ['bidi override', 'abc\u202edcba', 'abc\\u{202e}dcba'],
    ['bidi isolate', '\u2066x\u2069', '\\u{2066}x\\u{2069}'],
    ['a stored backslash is not taken for an escape', 'a\\nb', 'a\\\\nb'],
    ['empty', '', ''],
  ])('%s', (_case, input, expected) => {
    expect(terminalSafe(input)).toBe(expected);
  });

  test('no control character of C0, DEL or C1 survives', () => {
    for (let code = 0; code <= 0x9f; code++) {
      if (code >= 0x20 && code < 0x7f) continue;
      const out = terminalSafe(`x${String.fromCharCode(code)}y`);
      expect(out, `U+${code.toString(16)}`).toMatch(/^[\x20-\x7e]+$/);
    }
  });
});

describe('terminalSafeJson', () => {
  test.each([
    ['C1 CSI', { a: '\u009b2J' }],
    ['DEL', { a: 'x\u007f' }],
    ['bidi override', { a: '\u202e' }],
    ['line separator', { a: '\u2028' }],
    ['ESC (JSON.stringify escapes it already)', { a: '\u001b[2J' }],
  ])('%s: printable and the same value', (_case, value) => {
    const out = terminalSafeJson(JSON.stringify(value));
    expect(out).toMatch(/^[\x20-\x7e]+$/);
    expect(JSON.parse(out)).toEqual(value);
  });
});
