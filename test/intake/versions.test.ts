import { describe, expect, test } from 'vitest';
import { apiVersionOfBaseUrl, isSupportedApiVersion, SUPPORTED_API_VERSIONS } from '../../src/intake/versions.js';

describe('API versions', () => {
  test('this build reads 2024-12-10 and 2025-06-01, nothing else', () => {
    expect(SUPPORTED_API_VERSIONS).toEqual(['2024-12-10', '2025-06-01']);
    expect(isSupportedApiVersion('2025-06-01')).toBe(true);
    expect(isSupportedApiVersion('2026-01-01')).toBe(false);
  });

  test.each([
    ['https://api.example.com/intake_api/2024-12-10', '2024-12-10'],
    ['https://api.example.com/intake_api/2025-06-01/', '2025-06-01'],
    ['http://127.0.0.1:4000/intake_api/2025-06-01', '2025-06-01'],
    ['https://api.example.com/intake_api', undefined],
    ['https://api.example.com/intake_api/latest', undefined],
    ['not a url', undefined],
  ])('the version of %s is %s', (url, version) => {
    expect(apiVersionOfBaseUrl(url)).toBe(version);
  });
});
