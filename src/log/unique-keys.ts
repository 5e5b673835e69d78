import pino, { type Logger, type LoggerOptions } from 'pino';
import { redactDeep } from './redaction.js';

// pino writes a child's bindings after its parent's and a call's object after both, as text: a key
// bound twice (`component` by the worker and again by the poller, `feed` bound and logged again)
// appeared twice in one JSON line, which most log pipelines read as the first or reject. These
// two hooks keep one key per field: the innermost (most specific) value wins.

const { chindingsSym } = pino.symbols;

type WithChindings = Logger & { [chindingsSym]: string };

/** The bindings text `,"a":1,"b":2` as an object (duplicate keys: the last one wins, as JSON.parse does). */
function parseChindings(text: string): Record<string, unknown> {
  return text.length > 1 ? (JSON.parse(`{${text.slice(1)}}`) as Record<string, unknown>) : {};
}

function stringifyChindings(bindings: Record<string, unknown>): string {
  const text = JSON.stringify(bindings);
  return text === '{}' ? '' : `,${text.slice(1, -1)}`;
}

const parsed = new WeakMap<object, Record<string, unknown>>();

function bindingsOf(logger: WithChindings): Record<string, unknown> {
  let bindings = parsed.get(logger);
  if (!bindings) {
    bindings = parseChindings(logger[chindingsSym] ?? '');
    parsed.set(logger, bindings);
  }
  return bindings;
}

/**
 * A child binding a key its parent already bound replaces it (the child's value is the more specific).
 * Bindings are redacted here too: pino writes them as text, past the log formatter that redacts objects.
 */
function onChild(child: Logger): void {
  const logger = child as WithChindings;
  const text = logger[chindingsSym];
  if (typeof text !== 'string') return;
  const bindings = redactDeep(parseChindings(text)) as Record<string, unknown>;
  const rebuilt = stringifyChindings(bindings);
  if (rebuilt.length !== text.length || rebuilt !== text) logger[chindingsSym] = rebuilt;
  parsed.set(logger, bindings);
}

/**
 * A call's object repeating a bound key: dropped when it says the same; when it says something else
 * the line is written without that binding (the call's value is what the line is about).
 */
function logMethod(this: Logger, args: unknown[], method: (...a: unknown[]) => void): void {
  const first = args[0];
  if (first === null || typeof first !== 'object' || first instanceof Error || Array.isArray(first)) {
    method.apply(this, args);
    return;
  }
  const logger = this as WithChindings;
  const bindings = bindingsOf(logger);
  let object: Record<string, unknown> | undefined;
  let overridden: string[] | undefined;
  for (const key of Object.keys(first)) {
    if (!Object.hasOwn(bindings, key)) continue;
    const value = (first as Record<string, unknown>)[key];
    if (JSON.stringify(value) === JSON.stringify(bindings[key])) {
      object ??= { ...(first as Record<string, unknown>) };
      delete object[key];
    } else {
      (overridden ??= []).push(key);
    }
  }
  const rest = object ? [object, ...args.slice(1)] : args;
  if (!overridden) {
    method.apply(this, rest);
    return;
  }
  const kept = { ...bindings };
  for (const key of overridden) delete kept[key];
  const target = Object.create(logger) as WithChindings;
  target[chindingsSym] = stringifyChindings(kept);
  method.apply(target, rest);
}

/** The root logger options that keep one key per field in every line (see the file comment). */
export const uniqueKeyOptions: Pick<LoggerOptions, 'onChild' | 'hooks'> = {
  onChild,
  hooks: { logMethod: logMethod as NonNullable<LoggerOptions['hooks']>['logMethod'] },
};
