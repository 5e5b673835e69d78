import { readFileSync, statSync } from 'node:fs';
import { isPlainRoleName } from '../../db/grants.js';

/** The largest role map file read (a map of people to roles, not a directory). */
export const ROLE_MAP_MAX_BYTES = 256 * 1024;
/** An identity as a proxy header carries it: an email or user name, bounded, no spaces or controls. */
const IDENTITY = /^[A-Za-z0-9._@:+-]{1,128}$/;

/** Normalizes a header's identity for lookup (emails compare case-insensitively); undefined when malformed. Pure. */
export function normalizeIdentity(raw: string | undefined): string | undefined {
  const value = raw?.trim().toLowerCase();
  return value && IDENTITY.test(value) ? value : undefined;
}

/**
 * CONSOLE_ROLE_MAP_FILE's text: one `identity = role` per line, `#` comments and blank lines
 * ignored. Every line is checked; a duplicate identity is refused (which role would win is a
 * guess). Errors name the setting and the line number, never the identity (it may be an email). Pure.
 */
export function parseRoleMap(text: string, variable = 'CONSOLE_ROLE_MAP_FILE'): ReadonlyMap<string, string> {
  const map = new Map<string, string>();
  text.split(/\r?\n/).forEach((line, index) => {
    const content = line.trim();
    if (content === '' || content.startsWith('#')) return;
    const at = `${variable}: line ${index + 1}`;
    const eq = content.indexOf('=');
    if (eq < 0) throw new Error(`${at}: must be "identity = role"`);
    const identity = normalizeIdentity(content.slice(0, eq));
    const role = content.slice(eq + 1).trim();
    if (!identity) throw new Error(`${at}: the identity must be 1-128 of A-Z a-z 0-9 . _ @ : + -`);
    if (!isPlainRoleName(role)) throw new Error(`${at}: the role must be a plain PostgreSQL role name`);
    if (map.has(identity)) throw new Error(`${at}: this identity is mapped twice`);
    map.set(identity, role);
  });
  if (map.size === 0) throw new Error(`${variable}: maps no identity to a role`);
  return map;
}

/** Reads and parses the role map file, bounded in size; a missing or unreadable file throws naming the setting. */
export function loadRoleMap(path: string, variable = 'CONSOLE_ROLE_MAP_FILE'): ReadonlyMap<string, string> {
  let size: number;
  try {
    size = statSync(path).size;
  } catch (error) {
    throw new Error(`${variable}: cannot read ${path} (${(error as { code?: string }).code ?? 'error'})`);
  }
  if (size > ROLE_MAP_MAX_BYTES) throw new Error(`${variable}: ${path} is larger than ${ROLE_MAP_MAX_BYTES} bytes`);
  return parseRoleMap(readFileSync(path, 'utf8'), variable);
}
