/**
 * The Node.js line intake-sync supports (package.json `engines`, the image, the systemd unit and CI
 * all run it). `.npmrc` sets engine-strict, so `npm install` on an older Node fails at once naming
 * it; every command also checks the running version itself before doing anything, for an install
 * made some other way. test/package/node-range.test.ts checks every message states this range.
 */
export const SUPPORTED_NODE_MAJOR = 24;
/** The first minor of SUPPORTED_NODE_MAJOR supported. */
export const SUPPORTED_NODE_MINOR = 11;
/** The range as package.json `engines` writes it. */
export const SUPPORTED_NODE_RANGE = `>=${SUPPORTED_NODE_MAJOR}.${SUPPORTED_NODE_MINOR}`;

/** Set to `1` to run on an unsupported Node.js anyway (untested; no support). */
export const UNSUPPORTED_NODE_OVERRIDE = 'INTAKE_SYNC_ALLOW_UNSUPPORTED_NODE';

export type NodeRuntimeVerdict = { ok: true; warning?: string } | { ok: false; message: string };

/**
 * Pure: whether this Node.js version may run intake-sync. `version` is `process.versions.node`
 * (e.g. `20.20.2`), `override` the value of INTAKE_SYNC_ALLOW_UNSUPPORTED_NODE.
 */
export function judgeNodeRuntime(version: string, override: string | undefined): NodeRuntimeVerdict {
  const [major, minor] = version.split('.').map((part) => Number.parseInt(part, 10));
  if (
    Number.isInteger(major) &&
    Number.isInteger(minor) &&
    ((major as number) > SUPPORTED_NODE_MAJOR || (major === SUPPORTED_NODE_MAJOR && (minor as number) >= SUPPORTED_NODE_MINOR))
  ) {
    return { ok: true };
  }
  const found = `Node.js ${version} found, Node.js ${SUPPORTED_NODE_RANGE} required`;
  if (override === '1') {
    return { ok: true, warning: `intake-sync: ${found}; running anyway because ${UNSUPPORTED_NODE_OVERRIDE}=1 (unsupported)` };
  }
  return {
    ok: false,
    message:
      `intake-sync: ${found}. Install Node.js ${SUPPORTED_NODE_MAJOR} LTS (https://nodejs.org, your package manager, ` +
      `or \`nvm install ${SUPPORTED_NODE_MAJOR}\`), or set ${UNSUPPORTED_NODE_OVERRIDE}=1 to run unsupported.`,
  };
}
