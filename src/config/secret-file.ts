import { readFileSync, statSync } from 'node:fs';

/** A secret file longer than this is refused: a credential is short, a pasted archive is not one. */
export const MAX_SECRET_FILE_BYTES = 4096;

/** What reading one `file:` value gave: the value, or a problem that names neither the value nor the content. */
export type SecretFileRead = { value: string; worldReadable: boolean } | { problem: string };

/** How the reader reaches the filesystem (tests hand in their own). */
export interface SecretFileSystem {
  size(path: string): { bytes: number; mode: number; isFile: boolean };
  read(path: string): string;
}

const realFileSystem: SecretFileSystem = {
  size(path) {
    // statSync follows symlinks: Kubernetes mounts each key of a Secret as a link into ..data/
    const stat = statSync(path);
    return { bytes: stat.size, mode: stat.mode, isFile: stat.isFile() };
  },
  read: (path) => readFileSync(path, 'utf8'),
};

/**
 * Pure decision on one secret file's metadata and text: refused when empty or past the bound, one
 * trailing newline (LF or CRLF) trimmed (an editor or `echo` adds it; the operator never sent it).
 */
export function secretFromText(text: string, bytes: number): { value: string } | { problem: string } {
  if (bytes > MAX_SECRET_FILE_BYTES) return { problem: `is larger than ${MAX_SECRET_FILE_BYTES} bytes` };
  const value = text.replace(/\r?\n$/, '');
  if (value === '') return { problem: 'is empty' };
  if (/[\r\n]/.test(value)) return { problem: 'holds more than one line' };
  return { value };
}

/** Reads one `file:/path` value with the checks above. Never throws; never puts the content in a problem. */
export function readSecretFile(path: string, fs: SecretFileSystem = realFileSystem): SecretFileRead {
  if (!path.startsWith('/')) return { problem: 'must name an absolute path (file:/path)' };
  let meta: ReturnType<SecretFileSystem['size']>;
  try {
    meta = fs.size(path);
  } catch (error) {
    return { problem: `cannot be read (${errorCode(error)})` };
  }
  if (!meta.isFile) return { problem: 'is not a regular file' };
  if (meta.bytes > MAX_SECRET_FILE_BYTES) return { problem: `is larger than ${MAX_SECRET_FILE_BYTES} bytes` };
  let text: string;
  try {
    text = fs.read(path);
  } catch (error) {
    return { problem: `cannot be read (${errorCode(error)})` };
  }
  const decided = secretFromText(text, Buffer.byteLength(text));
  if ('problem' in decided) return decided;
  // o+r: any local user may read the credential
  return { value: decided.value, worldReadable: (meta.mode & 0o004) !== 0 };
}

function errorCode(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? code : 'error';
}

/**
 * Collects what reading a FEEDS_FILE's `file:` values found beside the values: the paths read (a
 * reload watches their directories) and warnings (world-readable files), logged by the caller.
 */
export class SecretFileReader {
  readonly paths = new Set<string>();
  readonly warnings: string[] = [];

  constructor(private readonly fs: SecretFileSystem = realFileSystem) {}

  /** One `file:` value (its path is no secret: the warning names it). */
  read(path: string): SecretFileRead {
    this.paths.add(path);
    const read = readSecretFile(path, this.fs);
    if ('value' in read && read.worldReadable)
      this.warnings.push(`FEEDS_FILE: the secret file ${path} is readable by every local user (chmod o-r, or a Secret's defaultMode 0440)`);
    return read;
  }
}
