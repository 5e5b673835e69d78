import { parseArgs } from 'node:util';
import { z } from 'zod';
import { BenchUsageError } from './bench-usage-error.js';

// What every bench's command line shares: numbers checked by zod with messages that name the bound,
// and one parse that maps each flag to its schema key and names the flag in every problem.

/** A number from text; the type message only (a schema-wide `message` would also replace the range messages). */
export const number = () => z.coerce.number({ error: (issue) => (issue.code === 'invalid_type' ? 'must be a number' : undefined) });

export const wholeNumber = (min: number, max: number) =>
  number()
    .int({ message: 'must be a whole number' })
    .min(min, { message: `must be >= ${min}` })
    .max(max, { message: `must be <= ${max}` });

/**
 * Parses `argv` against `schema`, whose keys are given as `flags` (`--name`); `booleans` are the keys
 * whose flag takes no value. Throws BenchUsageError with one line per problem, each naming its flag,
 * then `usage`.
 */
export function parseFlagArgs<S extends z.ZodObject>(
  argv: readonly string[],
  schema: S,
  flags: Record<keyof z.output<S> & string, string>,
  usage: string,
  booleans: readonly (keyof z.output<S> & string)[] = [],
): z.output<S> {
  const entries = Object.entries(flags) as [string, string][];
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      strict: true,
      options: Object.fromEntries(
        entries.map(([key, flag]) => [flag.slice(2), { type: booleans.includes(key) ? ('boolean' as const) : ('string' as const) }]),
      ),
    }) as { values: Record<string, string | boolean | undefined> });
  } catch (error) {
    throw new BenchUsageError(`${(error as Error).message}\n${usage}`, { cause: error });
  }
  const result = schema.safeParse(Object.fromEntries(entries.map(([key, flag]) => [key, values[flag.slice(2)]])));
  if (result.success) return result.data;
  const lines = result.error.issues.map(
    (issue) => `  ${flags[issue.path[0] as keyof typeof flags] ?? String(issue.path[0])}: ${issue.message}`,
  );
  throw new BenchUsageError(`invalid arguments:\n${lines.join('\n')}\n${usage}`);
}
