import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TracedCommand } from '../../src/cli/traced-command.js';
import type { Telemetry } from '../../src/telemetry/start.js';
import type { OtlpReceiver } from '../support/telemetry/otlp-receiver.js';
import { tracingTo } from '../support/telemetry/traced-world.js';

// Issue 38 §2: each CLI command that changes data is one root span, wired where commands are
// registered (TracedCommand); a reading command has none. Exported to a real receiver.

let receiver: OtlpReceiver;
let telemetry: Telemetry;

beforeAll(async () => {
  ({ receiver, telemetry } = await tracingTo('http/protobuf'));
});
afterAll(async () => {
  await telemetry.shutdown();
  await receiver.close();
});

function program(ran: string[]) {
  const root = new TracedCommand().name('intake-sync').exitOverride();
  const prescriptions = root.command('prescriptions');
  prescriptions
    .command('send')
    .argument('<file>')
    .action(async (file: string) => void ran.push(`send ${file}`));
  prescriptions.command('list').action(async () => void ran.push('list'));
  root.command('purge').action(async () => {
    ran.push('purge');
    throw new Error('the purge failed');
  });
  return root;
}

describe('TracedCommand', () => {
  it('a data-changing command runs in its span; a reading one in none; a failure marks the span', async () => {
    const ran: string[] = [];
    await program(ran).parseAsync(['node', 'intake-sync', 'prescriptions', 'send', 'patient-Zqxcanary.json']);
    await program(ran).parseAsync(['node', 'intake-sync', 'prescriptions', 'list']);
    await expect(program(ran).parseAsync(['node', 'intake-sync', 'purge'])).rejects.toThrow('the purge failed');
    expect(ran).toEqual(['send patient-Zqxcanary.json', 'list', 'purge']);
    await telemetry.flush();
    const spans = receiver.spans();
    expect(spans.map((s) => [s.name, s.kind, s.parentSpanId, s.attributes['intake_sync.command'], s.status.code])).toEqual([
      ['intake-sync prescriptions send', 1, '', 'prescriptions send', 0],
      ['intake-sync purge', 1, '', 'purge', 2],
    ]);
    expect(spans[1]?.attributes['error.type']).toBe('Error');
    // arguments (a file name, which may say anything) are not exported, nor the error's message
    expect(receiver.bodies().some((b) => b.includes('Zqxcanary') || b.includes('the purge failed'))).toBe(false);
  });
});
