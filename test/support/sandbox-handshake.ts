import { z } from 'zod';

/**
 * The simulator started as a process, the part tests and benches share: the command line of
 * `intake-sync sandbox` on an ephemeral port, and its one-line JSON handshake read back. How the
 * process is spawned stays the caller's (the fault suite runs the compiled CLI under its leak scan,
 * the benches the sources through tsx).
 */
const handshakeSchema = z.object({
  base_url: z.string(),
  key: z.string(),
  secret: z.string(),
  admin_url: z.string(),
});

/** Where a sandbox process answers, and the credential its feed takes. */
export interface SandboxHandshake {
  baseUrl: string;
  key: string;
  secret: string;
  /** the admin API's root, ending in /_sandbox */
  adminUrl: string;
}

/** The CLI arguments that start a sandbox on a free port with this credential and print the handshake. */
export function sandboxArgs(credentials: { key: string; secret: string }): string[] {
  return ['sandbox', '--port', '0', '--key', credentials.key, '--secret', credentials.secret, '--json'];
}

/** Parses the handshake line (as text or as its parsed JSON); throws on any other shape. */
export function parseSandboxHandshake(line: string | unknown): SandboxHandshake {
  const handshake = handshakeSchema.parse(typeof line === 'string' ? JSON.parse(line) : line);
  return {
    baseUrl: handshake.base_url.replace(/\/+$/, ''),
    key: handshake.key,
    secret: handshake.secret,
    // admin_url may name the server root or /_sandbox itself
    adminUrl: handshake.admin_url.replace(/\/+$/, '').replace(/(\/_sandbox)?$/, '/_sandbox'),
  };
}
