import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { registerCommands } from '../../src/cli/commands.js';
import { REPO } from '../support/docs/markdown.js';

// The reverse of names.test.ts: every command, subcommand and option that `--help` lists is in
// docs/commands.md (in a line that names that command), and the README's table names every
// top-level command. A new option cannot ship without its line in the reference.

const program = new Command().name('intake-sync');
await registerCommands(program);

const reference = readFileSync(join(REPO, 'docs/commands.md'), 'utf8');
const readme = readFileSync(join(REPO, 'README.md'), 'utf8');

/** `--feed` is documented once for every command that takes it, in the paragraph above the tables. */
const DOCUMENTED_ONCE = new Set(['--feed', '--help']);

interface Listed {
  words: string[];
  options: string[];
}

function listed(): Listed[] {
  const out: Listed[] = [];
  for (const top of program.commands) {
    const leaves =
      top.commands.length > 0
        ? top.commands.map((sub) => ({ command: sub, words: [top.name(), sub.name()] }))
        : [{ command: top, words: [top.name()] }];
    for (const { command, words } of leaves) {
      out.push({ words, options: command.options.map((o) => o.long).filter((o): o is string => o !== undefined) });
    }
  }
  return out;
}

/** The lines of the reference whose code names this command (`intake-sync quarantine list`, or `quarantine list` after a `/`). */
function linesNaming(words: string[]): string[] {
  const name = words.join(' ');
  const pattern = new RegExp(`\`(?:intake-sync )?${name.replace(/[-]/g, '\\-')}(?=[\\s\`])`);
  return reference.split('\n').filter((line) => pattern.test(line));
}

describe('docs/commands.md lists everything --help lists', () => {
  const commands = listed();

  it('finds the commands', () => {
    expect(commands.length).toBeGreaterThan(25);
  });

  it.each(commands.map((c) => [c.words.join(' '), c] as const))('%s: the command and each of its options', (_name, command) => {
    const lines = linesNaming(command.words);
    expect(lines, `no line of docs/commands.md names \`intake-sync ${command.words.join(' ')}\``).not.toEqual([]);
    const text = lines.join('\n');
    const missing = command.options.filter((option) => !DOCUMENTED_ONCE.has(option) && !new RegExp(`${option}(?![a-z-])`).test(text));
    expect(missing, `options of ${command.words.join(' ')} missing from its lines in docs/commands.md`).toEqual([]);
  });

  it("the README's table names every top-level command", () => {
    const table = readme.split('\n').filter((line) => line.startsWith('| `intake-sync '));
    const missing = program.commands
      .map((c) => c.name())
      .filter((name) => !table.some((line) => line.startsWith(`| \`intake-sync ${name}`)));
    expect(missing).toEqual([]);
  });
});
