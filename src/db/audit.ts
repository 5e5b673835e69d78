import { whoRanThis } from '../lib/who-ran-this.js';

// Who ran this (the operating system's user@host) and how it is written into the audit trail. The
// calls that write and read the trail are src/store-api/audit/audit-entries.ts.

/**
 * What `_audit()` accepts as on_behalf_of (and `intake_sync.actor`): 1-128 of A-Z a-z 0-9 . _ @ : + -.
 * The caller asserts it; nothing checks it is true (docs/security.md, "Audit trail").
 */
export const ATTRIBUTION_PATTERN = /^[A-Za-z0-9._@:+-]{1,128}$/;

/**
 * `text` made an acceptable attribution: every other character becomes `_`, at most 128 characters,
 * `unknown` for nothing (a hostname or user name may hold spaces, a backslash or a non-ASCII letter).
 */
export function attributionOf(text: string): string {
  const safe = Array.from(text)
    .map((char) => (/^[A-Za-z0-9._@:+-]$/.test(char) ? char : '_'))
    .join('')
    .slice(0, 128);
  return safe === '' ? 'unknown' : safe;
}

/**
 * Who runs this process, beyond its database role: `user@host` of the operating system. The
 * database records session_user itself; this says which person or machine used that role.
 */
export function osActor(): string {
  return attributionOf(whoRanThis());
}
