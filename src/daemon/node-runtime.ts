/**
 * The Node.js line intake-sync supports (package.json `engines`, the image, the systemd unit and CI
 * all run it). npm only warns on a mismatched `engines` (EBADENGINE, buried in install output), so
 * every command checks the running major itself before doing anything.
 */
export const SUPPORTED_NODE_MAJOR = 24;

/** Set to `1` to run on an unsupported Node.js anyway (untested; no support). */
export const UNSUPPORTED_NODE_OVERRIDE = 'INTAKE_SYNC_ALLOW_UNSUPPORTED_NODE';

export type NodeRuntimeVerdict = { ok: true; warning?: string } | { ok: false; message: string };

/**
 * Pure: whether this Node.js version may run intake-sync. `version` is `process.versions.node`
 * (e.g. `20.20.2`), `override` the value of INTAKE_SYNC_ALLOW_UNSUPPORTED_NODE.
 */
export function judgeNodeRuntime(version: string, override: string | undefined): NodeRuntimeVerdict {
  const major = Number.parseInt(version.split('.')[0] ?? '', 10);
  if (Number.isInteger(major) && major >= SUPPORTED_NODE_MAJOR) return { ok: true };
  const found = `Node.js ${version} found, Node.js ${SUPPORTED_NODE_MAJOR} or newer required`;
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
