import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

/**
 * The Node.js line the kit runs (issue 20 §3): the image's pinned base, the systemd unit's
 * ExecStartPre guard and package.json engines say the same LTS line, and CI installs it.
 */
const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
const engines = (JSON.parse(read('package.json')) as { engines: { node: string } }).engines.node;
const [, engineMajor, engineMinor] = /^>=(\d+)\.(\d+)$/.exec(engines) ?? [];

/** Runs the unit's ExecStartPre script against a pretended node version: true when it lets the daemon start. */
function guardAccepts(version: string): boolean {
  const unit = read('deploy/systemd/intake-sync.service');
  const script = /^ExecStartPre=\/usr\/bin\/node -e "(.*)"$/m.exec(unit)?.[1];
  if (!script) throw new Error('no ExecStartPre node guard in the unit');
  let exited: number | undefined;
  const fakeProcess = { versions: { node: version }, version: `v${version}`, exit: (code: number) => (exited = code) };
  const fakeConsole = { error: () => {} };
  new Function('process', 'console', script)(fakeProcess, fakeConsole);
  return exited === undefined;
}

describe('the Node.js line', () => {
  it('engines claims one LTS line from a release that has security support (22 or newer)', () => {
    expect(engines).toMatch(/^>=\d+\.\d+$/);
    expect(Number(engineMajor)).toBeGreaterThanOrEqual(22);
    expect(Number(engineMajor) % 2, 'an even (LTS) line').toBe(0);
  });

  it("the image's base is pinned by its patch version (or digest) on engines' line, in both stages", () => {
    const dockerfile = read('Dockerfile');
    const image = /^ARG NODE_IMAGE=(\S+)$/m.exec(dockerfile)?.[1] ?? '';
    expect(image).toMatch(/^node:\d+\.\d+\.\d+-[a-z]+-slim(@sha256:[0-9a-f]{64})?$/);
    const [major, minor] = (/^node:(\d+)\.(\d+)/.exec(image) ?? []).slice(1).map(Number);
    expect(major).toBe(Number(engineMajor));
    expect(minor).toBeGreaterThanOrEqual(Number(engineMinor));
    const froms = dockerfile.match(/^FROM .*/gm) ?? [];
    expect(froms.length).toBeGreaterThan(0);
    for (const from of froms) expect(from).toMatch(/^FROM \$\{NODE_IMAGE\}/);
  });

  it.each([
    ['20.19.5', false],
    ['22.23.3', false],
    [`${engineMajor}.${Number(engineMinor) - 1}.0`, false],
    [`${engineMajor}.${engineMinor}.0`, true],
    ['24.21.0', true],
    ['26.10.0', true],
  ])("the systemd unit's guard on node %s: starts %s", (version, starts) => {
    expect(guardAccepts(version)).toBe(starts);
  });

  it('CI installs and tests on the same line', () => {
    expect(read('scripts/ci-node.sh')).toContain(`NODE_LINE=\${NODE_LINE:-${engineMajor}}`);
    expect(read('.ci/run')).toMatch(/^source scripts\/ci-node\.sh$/m);
  });
});
