import { readFileSync } from 'node:fs';

/**
 * This build's version, from the package.json it ships with: `../package.json` from src/ (tsx) and
 * from dist/ (the build) alike. Read once; "unknown" only if the file is missing, which no install
 * produces (package.json is always part of a package).
 */
export const VERSION: string = readVersion();

function readVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version?: unknown };
    return typeof pkg.version === 'string' ? pkg.version : 'unknown';
  } catch {
    return 'unknown';
  }
}
