import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { COMMAND_NAMES, groupsFor, registerCommands } from '../../src/cli/commands.js';

/** Every command path of a program, with its options: what `--help` of each would print. */
function tree(command: Command, prefix = ''): string[] {
  return command.commands.flatMap((sub) => {
    const path = `${prefix}${sub.name()}`;
    const options = sub.options.map((o) => o.flags).join(' ');
    return [`${path} ${options}`.trim(), ...tree(sub, `${path} `)];
  });
}

async function programOf(names?: readonly string[]): Promise<Command> {
  const program = new Command().name('intake-sync');
  await registerCommands(program, names);
  return program;
}

describe('the command groups load on demand', () => {
  it('a command loads its own group only, and that group is the same as in the whole program', async () => {
    const whole = tree(await programOf());
    for (const name of COMMAND_NAMES) {
      const alone = tree(await programOf(groupsFor([name, '--help'])));
      expect(alone.length, name).toBeGreaterThan(0);
      expect(
        alone.every((line) => line === name || line.startsWith(`${name} `)),
        name,
      ).toBe(true);
      expect(alone, name).toEqual(whole.filter((line) => line === name || line.startsWith(`${name} `)));
    }
  });

  it('no command, help, or an unknown name loads every group, in the listing order', async () => {
    expect(groupsFor([])).toEqual(COMMAND_NAMES);
    expect(groupsFor(['--help'])).toEqual(COMMAND_NAMES);
    expect(groupsFor(['help', 'status'])).toEqual(COMMAND_NAMES);
    expect(groupsFor(['stauts'])).toEqual(COMMAND_NAMES);
    const top = (await programOf()).commands.map((c) => c.name());
    expect(top).toEqual(COMMAND_NAMES);
  });

  it('the command is the first argument that is not an option; --version alone loads nothing', () => {
    expect(groupsFor(['status', '--json'])).toEqual(['status']);
    expect(groupsFor(['-h', 'quarantine', 'list'])).toEqual(['quarantine']);
    expect(groupsFor(['rematch', '--dry-run'])).toEqual(['rematch']);
    expect(groupsFor(['--version'])).toEqual([]);
    expect(groupsFor(['-V'])).toEqual([]);
  });
});
