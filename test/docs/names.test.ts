import { ALLOWED_ATTRIBUTE_KEYS, OWN_SPAN_NAMES } from '../../src/telemetry/attributes.js';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command } from 'commander';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerCommands } from '../../src/cli/commands.js';
import { queryRows } from '../../src/db/connection.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { codeFragments, REPO, userDocs } from '../support/docs/markdown.js';

// Every command and SQL name the README and docs/ mention exists: commands against the CLI's own
// commander program (built, never run), SQL names against a freshly migrated database. A page
// cannot describe a command or a function that is not there.

const program = new Command().name('intake-sync');
await registerCommands(program);

/** Where `intake-sync` starts a command line: at the start, after $, npx, env assignments, a pipe or $(. */
const COMMAND_START = /(?:^|[|;&(]|\$|\bnpx|\bsudo)\s*$|^\s*(?:\$\s+)?(?:[A-Z_][A-Z0-9_]*=\S*\s+)+$/;

interface Mention {
  where: string;
  text: string;
}

/** `intake-sync <command> [subcommand] [--options]` in the code of a page. */
function commandMentions(): (Mention & { words: string[]; options: string[] })[] {
  return userDocs().flatMap(({ path, text }) =>
    codeFragments(text).flatMap(({ text: code, line }) =>
      [...code.matchAll(/(?<![\w/.-])intake-sync(?=[ \t]+[a-z])/g)]
        .filter((m) => COMMAND_START.test(code.slice(0, m.index)))
        .map((m) => {
          // the rest of this command: up to a pipe (a table's \| is part of the text), a ; or && or a comment
          const rest = code.slice(m.index + 'intake-sync'.length).split(/(?<!\\)\||;|&&|#|\$\(/)[0]!;
          const tokens = rest.trim().split(/\s+/);
          const words: string[] = [];
          for (const token of tokens) {
            if (words.length === 2 || !/^[a-z][a-z-]*$/.test(token)) break;
            words.push(token);
          }
          const options = tokens.map((t) => /^\[?(--[a-z][a-z-]*)/.exec(t)?.[1]).filter((o): o is string => o !== undefined);
          return { where: `${path}:${line}`, text: code.trim(), words, options };
        }),
    ),
  );
}

/** The command a mention names, or a problem. */
function resolve(words: string[]): { command?: Command; problem?: string } {
  const top = program.commands.find((c) => c.name() === words[0]);
  if (!top) return { problem: `no command '${words[0]}'` };
  if (top.commands.length === 0 || words[1] === undefined) return { command: top };
  const sub = top.commands.find((c) => c.name() === words[1]);
  if (!sub) return { problem: `'${words[0]}' has no subcommand '${words[1]}'` };
  return { command: sub };
}

describe('commands in the README and docs/', () => {
  const mentions = commandMentions();

  it('finds the commands the pages show', () => {
    expect(mentions.length).toBeGreaterThan(50);
  });

  it('every `intake-sync <command> [subcommand]` exists, with the options it is shown with', () => {
    // the error reference (docs/commands.md, "Error messages") shows an unknown command and option on purpose: `bogus`
    const problems = mentions
      .filter(({ text }) => !/\bbogus\b/.test(text))
      .flatMap(({ where, text, words, options }) => {
        const { command, problem } = resolve(words);
        if (!command) return [`${where}: ${problem} in \`${text}\``];
        const known = new Set(['--help', ...command.options.map((o) => o.long)]);
        return options.filter((o) => !known.has(o)).map((o) => `${where}: '${command.name()}' has no option ${o} in \`${text}\``);
      });
    expect(problems).toEqual([]);
  });
});

describe('SQL names in the README and docs/', () => {
  let tdb: TestDatabase;
  let existing: Set<string>;

  beforeAll(async () => {
    tdb = await createTestDatabase('docs_names');
    const rows = await queryRows<{ name: string }>(
      tdb.database.db,
      sql.raw(`select c.relname as name from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace where n.nspname = 'intake_sync'
       union select p.proname from pg_catalog.pg_proc p join pg_catalog.pg_namespace n on n.oid = p.pronamespace where n.nspname = 'intake_sync'
       union select t.typname from pg_catalog.pg_type t join pg_catalog.pg_namespace n on n.oid = t.typnamespace where n.nspname = 'intake_sync'`),
    );
    existing = new Set(rows.map((r) => r.name));
  });
  afterAll(async () => {
    await tdb?.drop();
  });

  /** Custom settings the migrations read (`current_setting('intake_sync.actor')`): names, but not objects. */
  function settings(): Set<string> {
    const sql = readdirSync(join(REPO, 'drizzle'))
      .filter((f) => f.endsWith('.sql'))
      .map((f) => readFileSync(join(REPO, 'drizzle', f), 'utf8'))
      .join('\n');
    return new Set([...sql.matchAll(/(?:current_setting|set_config)\s*\(\s*'intake_sync\.([a-z_][a-z0-9_]*)'/gi)].map((m) => m[1]!));
  }

  /** Span and attribute names of the traces (docs/operations.md, "Tracing"): names, but not objects. */
  function telemetryNames(): string[] {
    return [...ALLOWED_ATTRIBUTE_KEYS, ...OWN_SPAN_NAMES].flatMap((name) => /^intake_sync\.([a-z_]+)/.exec(name)?.[1] ?? []);
  }

  it('every `intake_sync.<name>` is a table, view, sequence, function or type of a freshly migrated schema', () => {
    const known = new Set([...settings(), ...telemetryNames()]);
    const problems = userDocs().flatMap(({ path, text }) =>
      text.split('\n').flatMap((line, index) =>
        [...line.matchAll(/(?<![\w."])"?intake_sync"?\."?([a-z_][a-z0-9_]*)/g)]
          .map((m) => m[1]!)
          .filter((name) => !existing.has(name) && !known.has(name))
          .map((name) => `${path}:${index + 1}: intake_sync.${name} does not exist`),
      ),
    );
    expect(problems).toEqual([]);
  });
});
