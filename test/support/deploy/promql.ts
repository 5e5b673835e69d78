/** PromQL words that are not metric names (operators, modifiers, literals). */
const KEYWORDS = new Set([
  'and',
  'or',
  'unless',
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'offset',
  'bool',
  'inf',
  'nan',
  'atan2',
]);

/**
 * The metric names a PromQL expression selects: identifiers outside strings, label matchers,
 * ranges and grouping lists that are not followed by "(" (functions and aggregations are).
 * Good enough for the rules and dashboard of this repository, which a real Prometheus also parses
 * in test/deploy/prometheus-live.test.ts.
 */
export function metricNames(expr: string): string[] {
  let text = expr.replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, ' ');
  text = text.replace(/\{[^}]*\}/g, ' ').replace(/\[[^\]]*\]/g, ' ');
  text = text.replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  const names = new Set<string>();
  for (const match of text.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)) {
    const word = match[0];
    const before = text[match.index - 1] ?? ' ';
    // the exponent of a number literal (1e3) or part of a duration
    if (/[0-9.]/.test(before)) continue;
    if (KEYWORDS.has(word.toLowerCase())) continue;
    if (
      text
        .slice(match.index + word.length)
        .trimStart()
        .startsWith('(')
    )
      continue;
    names.add(word);
  }
  return [...names].sort();
}

/** The names a registry exposes, histogram and summary series included. */
export function exposedNames(metrics: Array<{ name: string; type: unknown }>): Set<string> {
  const names = new Set<string>();
  for (const metric of metrics) {
    names.add(metric.name);
    if (String(metric.type) === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(metric.name + suffix);
    if (String(metric.type) === 'summary') for (const suffix of ['_sum', '_count']) names.add(metric.name + suffix);
  }
  return names;
}

/** GitHub's anchor for a Markdown heading. */
export function headingAnchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9 _-]/g, '')
    .replace(/ /g, '-');
}
