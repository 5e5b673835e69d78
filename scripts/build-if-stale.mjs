// `npm start`'s prestart: builds only when dist/ is missing or older than a source file, so a start
// after a build (or `npm install`, whose prepare builds) costs a directory walk, not a tsc run.
// Compared: the newest mtime under src/ and of the tsconfig files against dist/cli/main.js, which
// every build writes. Usage: node scripts/build-if-stale.mjs [--check] (--check only prints
// `fresh` or `stale: <why>` and exits 0 or 1).
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const root = process.cwd();
const BUILT = join(root, 'dist/cli/main.js');
const INPUTS = ['tsconfig.json', 'tsconfig.build.json'];

/** The newest mtime (ms) of the build's inputs and the file that has it. */
function newestSource() {
  let newest = { ms: 0, file: '' };
  const visit = (path) => {
    const stat = statSync(path);
    if (stat.isDirectory()) {
      for (const entry of readdirSync(path)) visit(join(path, entry));
    } else if (stat.mtimeMs > newest.ms) {
      newest = { ms: stat.mtimeMs, file: path };
    }
  };
  visit(join(root, 'src'));
  for (const file of INPUTS) {
    try {
      visit(join(root, file));
    } catch {
      // an optional input that is not there
    }
  }
  return newest;
}

/** Why a build is needed, or null when dist/ is current. */
function staleReason() {
  let builtMs;
  try {
    builtMs = statSync(BUILT).mtimeMs;
  } catch {
    return 'dist/cli/main.js is missing';
  }
  const newest = newestSource();
  return newest.ms > builtMs ? `${newest.file.slice(root.length + 1)} is newer than dist/` : null;
}

const reason = staleReason();
if (process.argv.includes('--check')) {
  process.stdout.write(reason === null ? 'fresh\n' : `stale: ${reason}\n`);
  process.exit(reason === null ? 0 : 1);
}
if (reason !== null) {
  process.stderr.write(`building: ${reason}\n`);
  const build = spawnSync('npm', ['run', 'build'], { stdio: 'inherit' });
  process.exit(build.status ?? 1);
}
