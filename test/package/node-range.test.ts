import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { judgeNodeRuntime, SUPPORTED_NODE_RANGE } from '../../src/daemon/node-runtime.js';

// One supported Node.js range, said the same way everywhere a user meets it: package.json engines
// (which npm enforces at install, .npmrc's engine-strict), the CLI's refusal, the systemd unit's
// guard, and the docs that say what to install.

const REPO = join(import.meta.dirname, '../..');
const read = (path: string) => readFileSync(join(REPO, path), 'utf8');
const engines = (JSON.parse(read('package.json')) as { engines: { node: string } }).engines.node;

describe(`every message states the supported range (${engines})`, () => {
  it('package.json engines is the range the CLI checks', () => {
    expect(SUPPORTED_NODE_RANGE).toBe(engines);
  });

  it('npm install refuses an unsupported Node at once: .npmrc sets engine-strict', () => {
    expect(read('.npmrc').split('\n')).toContain('engine-strict=true');
  });

  it("the CLI's refusal and its override warning", () => {
    const refused = judgeNodeRuntime('20.20.2', undefined);
    expect(refused.ok).toBe(false);
    if (!refused.ok) expect(refused.message).toContain(`Node.js ${engines} required`);
    const overridden = judgeNodeRuntime('20.20.2', '1');
    expect(overridden.ok && overridden.warning).toContain(`Node.js ${engines} required`);
  });

  it("the systemd unit's start guard", () => {
    expect(read('deploy/systemd/intake-sync.service')).toContain(`intake-sync needs Node.js ${engines} (LTS)`);
  });

  it.each(['README.md', 'CONTRIBUTING.md', 'docs/getting-started.md', 'docs/operations.md'])('%s', (path) => {
    expect(read(path)).toMatch(new RegExp(`Node\\.js \\|? ?\`${engines}\``));
    // no second wording of the requirement beside it
    expect(read(path)).not.toMatch(/Node\.js 24 or newer|24\.11 or newer/);
  });
});
