import { describe, expect, it } from 'vitest';
import { allowedAttributes, MAX_ATTRIBUTE_TEXT } from '../../src/telemetry/attributes.js';

describe('allowedAttributes', () => {
  it('drops every key off the list, bounds text, strips URLs to scheme, host and path', () => {
    expect(
      allowedAttributes({
        'patient.first_name': 'Zqxcanary',
        'db.statement': 'select $1',
        'db.query.parameter.0': 'Zqxcanary',
        'url.full': 'https://user:pw@op.example/intake_api/2024-12-10/events?iterator=abc#x',
        'intake_sync.feed': `east\u0000\u001b${'x'.repeat(1000)}`,
        'intake_sync.page.events': 7,
        'intake_sync.page.done': true,
        'intake_sync.retry.delay_ms': Number.NaN,
        'http.route': ['/a', '/b'],
      }),
    ).toEqual({
      'url.full': 'https://op.example/intake_api/2024-12-10/events',
      'intake_sync.feed': `east${'x'.repeat(MAX_ATTRIBUTE_TEXT - 4)}`,
      'intake_sync.page.events': 7,
      'intake_sync.page.done': true,
    });
  });
});
