import { hostname, userInfo } from 'node:os';

/** Who runs a command that moves a feed (reset, skip, resync, migrate), for the audit trail: user@host. */
export function operator(): string {
  return `${userInfo().username}@${hostname()}`;
}
