import { describe, expect, it } from 'vitest';
import { formatTraceparent, parseTraceparent } from '../../src/telemetry/traceparent.js';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN = '00f067aa0ba902b7';

describe('parseTraceparent (W3C Trace Context, version 00, strict)', () => {
  it.each([
    [`00-${TRACE}-${SPAN}-01`, { traceId: TRACE, spanId: SPAN, sampled: true }],
    [`00-${TRACE}-${SPAN}-00`, { traceId: TRACE, spanId: SPAN, sampled: false }],
    [`00-${TRACE}-${SPAN}-03`, { traceId: TRACE, spanId: SPAN, sampled: true }],
  ])('%s is a trace context', (text, expected) => {
    expect(parseTraceparent(text)).toEqual(expected);
  });

  it.each([
    ['upper-case hex', `00-${TRACE.toUpperCase()}-${SPAN}-01`],
    ['another version', `01-${TRACE}-${SPAN}-01`],
    ['the forbidden version ff', `ff-${TRACE}-${SPAN}-01`],
    ['an all-zero trace id', `00-${'0'.repeat(32)}-${SPAN}-01`],
    ['an all-zero span id', `00-${TRACE}-${'0'.repeat(16)}-01`],
    ['a longer value', `00-${TRACE}-${SPAN}-01-more`],
    ['a short trace id', `00-${TRACE.slice(1)}-${SPAN}-01`],
    ['whitespace', ` 00-${TRACE}-${SPAN}-01`],
    ['not a string', 42],
    ['a huge string', 'x'.repeat(100_000)],
  ])('%s is ignored', (_label, text) => {
    expect(parseTraceparent(text)).toBeUndefined();
  });

  it('formats what it parses', () => {
    expect(formatTraceparent({ traceId: TRACE, spanId: SPAN, traceFlags: 1 })).toBe(`00-${TRACE}-${SPAN}-01`);
  });
});
