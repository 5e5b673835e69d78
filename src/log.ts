import pino, { type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import { uniqueKeyOptions } from './log-unique-keys.js';

/**
 * Keys that may carry PHI or secrets anywhere in a logged object. Redaction is a
 * safety net: call sites log identifiers only (event id, external_id, subscription id).
 */
const PHI_KEYS = [
  'patient',
  'patient_first_name',
  'patient_last_name',
  'patient_dob',
  'patient_state',
  'first_name',
  'middle_name',
  'last_name',
  'dob',
  'primary_phone',
  'phone',
  'fax',
  'email',
  'address',
  'prescription_identity',
  'identity',
  'raw',
  'body',
];
const SECRET_KEYS = ['authorization', 'Authorization', 'token', 'secret', 'apiSecret', 'api_secret', 'password'];

export const REDACT_PATHS = [...PHI_KEYS, ...SECRET_KEYS].flatMap((k) => [k, `*.${k}`, `*.*.${k}`]);

export interface CreateLoggerOptions {
  level?: string;
  /** pretty-print (used on a TTY); JSON lines otherwise */
  pretty?: boolean;
  destination?: DestinationStream;
}

/** The root logger; components take `log.child({ component })`. */
export function createLogger(options: CreateLoggerOptions = {}): Logger {
  const base: LoggerOptions = {
    level: options.level ?? 'info',
    redact: { paths: REDACT_PATHS, censor: '[REDACTED]' },
    base: { pid: process.pid },
    // one key per field in every JSON line, however children and calls repeat a binding
    ...uniqueKeyOptions,
  };
  if (options.destination) return pino(base, options.destination);
  if (options.pretty) {
    return pino({ ...base, transport: { target: 'pino-pretty', options: { colorize: true, destination: 2 } } });
  }
  return pino(base, pino.destination(2));
}

export type { Logger };
