import { describe, expect, it } from 'vitest';
import { isLoopbackHost, parseSecureBaseUrl } from '../../src/intake/base-url.js';
import { InsecureBaseUrlError } from '../../src/intake/errors/index.js';

describe('isLoopbackHost', () => {
  it.each([
    ['localhost', true],
    ['LOCALHOST', true],
    ['api.localhost', true],
    ['127.0.0.1', true],
    ['127.255.10.3', true],
    ['[::1]', true],
    ['::1', true],
    ['128.0.0.1', false],
    ['127.0.0.256', false],
    ['10.0.0.1', false],
    ['localhost.example.com', false],
    ['127.0.0.1.nip.io', false],
    ['example.com', false],
    ['[::2]', false],
  ])('%s -> %s', (host, expected) => {
    expect(isLoopbackHost(host)).toBe(expected);
  });
});

describe('parseSecureBaseUrl', () => {
  it.each([
    'https://intake.example.com/intake_api/2024-12-10',
    'http://127.0.0.1:8080/intake_api/2024-12-10',
    'http://localhost:3000/intake_api/2024-12-10',
    'http://[::1]:3000/intake_api/2024-12-10',
  ])('accepts %s', (url) => {
    expect(parseSecureBaseUrl(url).href).toBe(url);
  });

  it.each([
    'http://intake.example.com/intake_api/2024-12-10',
    'http://10.1.2.3/intake_api/2024-12-10',
    'ftp://127.0.0.1/intake_api/2024-12-10',
  ])('refuses %s', (url) => {
    expect(() => parseSecureBaseUrl(url)).toThrow(InsecureBaseUrlError);
  });

  it('does not echo an unparseable URL (it may carry credentials)', () => {
    expect(() => parseSecureBaseUrl('not a url secret123')).toThrow(/not an absolute URL/);
    expect(() => parseSecureBaseUrl('not a url secret123')).not.toThrow(/secret123/);
  });
});
