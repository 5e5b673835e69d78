import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseEnv } from 'node:util';
import { ConfigError } from './config.js';
import { terminalSafe } from '../lib/terminal-text.js';

/** What a `.env` in the working directory gave this process: the variable names it set, never values. */
export interface EnvFileRead {
  path: string;
  /** the variables the file set here (a variable of the real environment wins and is not among them) */
  taken: readonly string[];
  /** the variables the file also names that the real environment already set */
  overridden: readonly string[];
}

/** A `.env` is a handful of settings; anything larger is not one. */
const MAX_ENV_FILE_BYTES = 64 * 1024;

let read: EnvFileRead | undefined;

/**
 * Reads `.env` in `dir` (the working directory) once at start, as Node's `process.loadEnvFile` does:
 * a variable already in the environment keeps its value. Nothing happens without the file. A file
 * that cannot be read, or is too large, is refused (ConfigError, exit 2) naming it.
 */
export function readEnvFile(dir: string = process.cwd(), env: NodeJS.ProcessEnv = process.env): EnvFileRead | undefined {
  const path = resolve(join(dir, '.env'));
  if (!existsSync(path)) return undefined;
  let text: string;
  try {
    if (statSync(path).size > MAX_ENV_FILE_BYTES) throw Object.assign(new Error('too large'), { code: 'EFBIG' });
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    throw new ConfigError(
      `.env: cannot read ${terminalSafe(path)} (${code === 'EFBIG' ? `larger than ${MAX_ENV_FILE_BYTES} bytes` : typeof code === 'string' ? code : 'unreadable'}): fix or remove it`,
    );
  }
  const names = Object.keys(parseEnv(text)).sort();
  const overridden = names.filter((name) => env[name] !== undefined);
  if (env === process.env) process.loadEnvFile(path);
  else for (const [name, value] of Object.entries(parseEnv(text))) env[name] ??= value;
  read = { path, taken: names.filter((name) => !overridden.includes(name)), overridden };
  return read;
}

/** The `.env` this process read at start, if any (the daemon's start line says so). */
export function envFileRead(): EnvFileRead | undefined {
  return read;
}
