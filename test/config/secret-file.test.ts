import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { parseFeedsFile } from '../../src/config/feeds-file.js';
import { MAX_SECRET_FILE_BYTES, readSecretFile, SecretFileReader, secretFromText } from '../../src/config/secret-file.js';

describe('secretFromText', () => {
  test.each([
    ['a value as written', 's3cret', { value: 's3cret' }],
    ['one trailing LF trimmed', 's3cret\n', { value: 's3cret' }],
    ['one trailing CRLF trimmed', 's3cret\r\n', { value: 's3cret' }],
    ['inner spaces kept', ' a b ', { value: ' a b ' }],
    ['empty', '', { problem: 'is empty' }],
    ['only a newline', '\n', { problem: 'is empty' }],
    ['two lines', 'a\nb\n', { problem: 'holds more than one line' }],
    ['two trailing newlines', 'a\n\n', { problem: 'holds more than one line' }],
  ])('%s', (_label, text, expected) => {
    expect(secretFromText(text, Buffer.byteLength(text))).toEqual(expected);
  });

  test('past the bound is refused by size', () => {
    expect(secretFromText('x', MAX_SECRET_FILE_BYTES + 1)).toEqual({ problem: `is larger than ${MAX_SECRET_FILE_BYTES} bytes` });
  });
});

describe('readSecretFile (real files)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'secret-file-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const write = (name: string, text: string, mode = 0o600) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    chmodSync(path, mode);
    return path;
  };

  test('reads the value, through a Kubernetes-style symlink, and says whether others may read it', () => {
    mkdirSync(join(dir, '..data'));
    writeFileSync(join(dir, '..data', 'api_secret'), 'mounted\n');
    chmodSync(join(dir, '..data', 'api_secret'), 0o440);
    symlinkSync('..data/api_secret', join(dir, 'api_secret'));
    expect(readSecretFile(join(dir, 'api_secret'))).toEqual({ value: 'mounted', worldReadable: false });
    expect(readSecretFile(write('open', 'open\n', 0o644))).toEqual({ value: 'open', worldReadable: true });
  });

  test.each([
    ['a relative path', () => 'relative/secret', 'must name an absolute path (file:/path)'],
    ['a missing file', () => join(dir, 'missing'), 'cannot be read (ENOENT)'],
    ['a directory', () => dir, 'is not a regular file'],
    ['a file past the bound', () => write('big', 'x'.repeat(MAX_SECRET_FILE_BYTES + 1)), `is larger than ${MAX_SECRET_FILE_BYTES} bytes`],
    ['an empty file', () => write('empty', ''), 'is empty'],
  ])('%s is refused', (_label, path, problem) => {
    expect(readSecretFile(path())).toEqual({ problem });
  });

  test('a FEEDS_FILE value file:/path is read, warned about when world-readable, and never printed', () => {
    const secret = write('feed-secret', 'from-a-file\n', 0o644);
    const reader = new SecretFileReader();
    const text = JSON.stringify([
      { name: 'a', base_url: 'https://op.example/intake_api/2024-12-10', api_key: 'k', api_secret: `file:${secret}` },
    ]);
    expect(parseFeedsFile(text, '/f.json', {}, reader)[0]?.apiSecret).toBe('from-a-file');
    expect([...reader.paths]).toEqual([secret]);
    expect(reader.warnings).toEqual([
      `FEEDS_FILE: the secret file ${secret} is readable by every local user (chmod o-r, or a Secret's defaultMode 0440)`,
    ]);
    expect(reader.warnings.join('\n')).not.toContain('from-a-file');
  });

  test('a bad file: value is one line naming the field and the file, never the content', () => {
    const twoLines = write('two', 'line-one-value\nline-two-value\n');
    const text = JSON.stringify([
      {
        name: 'a',
        base_url: 'https://op.example/intake_api/2024-12-10',
        api_key: `file:${join(dir, 'nope')}`,
        api_secret: `file:${twoLines}`,
      },
    ]);
    let message = '';
    try {
      parseFeedsFile(text, '/f.json', {});
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain(`FEEDS_FILE: /f.json [0].api_key: names the file ${join(dir, 'nope')}, which cannot be read (ENOENT)`);
    expect(message).toContain(`FEEDS_FILE: /f.json [0].api_secret: names the file ${twoLines}, which holds more than one line`);
    expect(message).not.toContain('line-one-value');
  });
});
