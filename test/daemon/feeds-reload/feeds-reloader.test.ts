import { describe, expect, test } from 'vitest';
import { contentKey, problemLines, shouldAct } from '../../../src/daemon/feeds-reload/feeds-reloader.js';
import { watchedDirectories } from '../../../src/daemon/feeds-reload/file-watch.js';

describe('shouldAct', () => {
  test.each([
    ['a file event, new content', 'change', 'a', 'b', true],
    ['a file event, the same content (a touch, a second event of one swap)', 'change', 'a', 'a', false],
    ['SIGHUP, the same content: read and reported', 'signal', 'a', 'a', true],
    ['after a failed apply (no content acted on)', 'change', '', 'a', true],
  ] as const)('%s', (_label, trigger, last, seen, expected) => {
    expect(shouldAct(trigger, last, seen)).toBe(expected);
  });

  test('the content key tells secrets apart without holding them', () => {
    const feed = { name: 'a', baseUrl: 'https://op.example/intake_api/2024-12-10', apiKey: 'k', apiSecret: 'first' };
    const key = contentKey({ feeds: [feed] });
    expect(key).not.toBe(contentKey({ feeds: [{ ...feed, apiSecret: 'second' }] }));
    expect(key).toBe(contentKey({ feeds: [{ ...feed }] }));
    expect(key).not.toContain('first');
  });
});

describe('problemLines', () => {
  test.each([
    ['one problem', 'invalid environment:\n  FEEDS_FILE: /f [0].name: bad', ['FEEDS_FILE: /f [0].name: bad']],
    [
      'two problems',
      'invalid environment:\n  FEEDS_FILE: /f is x\n  FEEDS_FILE: /f [1]: y',
      ['FEEDS_FILE: /f is x', 'FEEDS_FILE: /f [1]: y'],
    ],
    ['not a config message', 'ECONNREFUSED', ['ECONNREFUSED']],
  ])('%s', (_label, message, expected) => {
    expect(problemLines(message)).toEqual(expected);
  });
});

describe('watchedDirectories', () => {
  test.each([
    ['the file and its secrets in one directory', ['/etc/s/feeds.json', '/etc/s/a'], ['/etc/s']],
    ['a ConfigMap and a Secret', ['/etc/config/feeds.json', '/etc/secrets/a', '/etc/secrets/b'], ['/etc/config', '/etc/secrets']],
    ['a relative FEEDS_FILE is resolved', ['feeds.json'], [process.cwd()]],
  ])('%s', (_label, files, expected) => {
    expect(watchedDirectories(files)).toEqual(expected);
  });
});
