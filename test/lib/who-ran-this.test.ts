import { hostname, userInfo } from 'node:os';
import { describe, expect, it, vi } from 'vitest';

describe('whoRanThis', () => {
  it('is user@host', async () => {
    const { whoRanThis } = await import('../../src/lib/who-ran-this.js');
    expect(whoRanThis()).toBe(`${userInfo().username}@${hostname()}`);
  });

  it('is uid-N@host when the uid has no passwd entry (userInfo throws)', async () => {
    vi.resetModules();
    vi.doMock('node:os', async (original) => ({
      ...(await original<typeof import('node:os')>()),
      userInfo: () => {
        throw Object.assign(new Error('ENOENT: no such file or directory, uv_os_get_passwd'), { code: 'ENOENT' });
      },
    }));
    try {
      const { whoRanThis } = await import('../../src/lib/who-ran-this.js');
      expect(whoRanThis()).toBe(`uid-${process.getuid?.() ?? 'unknown'}@${hostname()}`);
    } finally {
      vi.doUnmock('node:os');
      vi.resetModules();
    }
  });
});
