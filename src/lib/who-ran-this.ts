import { hostname, userInfo } from 'node:os';

/**
 * Who runs this process, as `user@host`: the one answer for the audit trail of every command and
 * action. A container's arbitrary uid has no passwd entry, where `userInfo()` throws; such a process
 * is `uid-<n>@host` rather than a command that fails before doing its work.
 */
export function whoRanThis(): string {
  let user: string;
  try {
    user = userInfo().username;
  } catch {
    user = `uid-${process.getuid?.() ?? 'unknown'}`;
  }
  return `${user}@${hostname()}`;
}
