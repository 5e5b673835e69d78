import pino, { type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import { uniqueKeyOptions } from './unique-keys.js';

import { redactDeep } from './redaction.js';
import { traceFields } from './trace-fields.js';

export { isRedactedKey, redactDeep } from './redaction.js';

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
    // every logged object, at any depth (log-redaction.ts): pino's own `redact` takes fixed paths only
    // (a child's bindings, which pino writes without this formatter, are redacted in onChild: log-unique-keys.ts)
    formatters: { log: (object) => redactDeep(object) as Record<string, unknown> },
    // error objects are walked by redactDeep too (message scrubbed, parameters removed)
    serializers: { err: (error: unknown) => redactDeep(error) },
    base: { pid: process.pid },
    // trace_id and span_id of the active span (docs/operations.md, "Tracing")
    mixin: traceFields,
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
