import { accessSync, constants } from 'node:fs';

/** The absolute path of an executable on PATH (or in the sbin folders Debian puts daemons in), or undefined. */
export function findExecutable(name: string): string | undefined {
  for (const dir of [...(process.env.PATH ?? '').split(':'), '/usr/sbin', '/sbin', '/usr/bin']) {
    if (!dir) continue;
    try {
      accessSync(`${dir}/${name}`, constants.X_OK);
      return `${dir}/${name}`;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** Says out loud why a suite is skipped (vitest shows only the name of a skipped suite). */
export function skipReason(tool: string, howToGet: string): string {
  const reason = `${tool} is not installed (${howToGet}); skipped`;
  console.warn(`SKIPPED: ${reason}`);
  return reason;
}
