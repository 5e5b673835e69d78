import { describe, expect, test } from 'vitest';
import { escapeHtml, html, queryString } from '../../src/console/html.js';

describe('html', () => {
  test.each([
    ['<script>alert(1)</script>', '&lt;script&gt;alert(1)&lt;/script&gt;'],
    [`"onmouseover='x'`, '&quot;onmouseover=&#39;x&#39;'],
    ['a & b', 'a &amp; b'],
    // Hono's escaping: a backtick needs none in element content or a quoted attribute (every attribute is quoted)
    ['`tick`', '`tick`'],
    [null, ''],
    [42, '42'],
  ])('escapes %j', (value, expected) => {
    expect(escapeHtml(value)).toBe(expected);
  });

  test('interpolated values are escaped, nested html is not escaped twice, arrays are joined', () => {
    const evil = '<img src=x onerror=alert(1)>';
    const inner = html`<b>${evil}</b>`;
    expect(html`<p title="${evil}">${inner}${[html`<i>1</i>`, '<2>']}</p>`.text).toBe(
      '<p title="&lt;img src=x onerror=alert(1)&gt;"><b>&lt;img src=x onerror=alert(1)&gt;</b><i>1</i>&lt;2&gt;</p>',
    );
  });

  test('false, null and undefined render nothing', () => {
    expect(html`${false}${null}${undefined}x`.text).toBe('x');
  });

  test('queryString drops empty values and encodes the rest', () => {
    expect(queryString({ a: 'x y', b: '', c: undefined, d: 'é&=' })).toBe('?a=x+y&d=%C3%A9%26%3D');
    expect(queryString({})).toBe('');
  });
});
