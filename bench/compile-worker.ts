import { spawnChild } from '../test/support/child-process.js';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BenchProcessError } from './bench-process-error.js';
import { definedOnly, REPO_ROOT } from './processes.js';

/** A compiled copy of bench/drain-worker.ts, the daemon's CLI and the src/ modules they import. */
export interface CompiledWorker {
  /** absolute path of the compiled drain worker, to run with plain `node` */
  entry: string;
  /** absolute path of the compiled src/cli/main.js (`intake-sync`), as dist/ ships it */
  cliEntry: string;
  remove(): Promise<void>;
}

/**
 * Compiles the drain worker and the CLI with tsc (only their import graphs) into a temp folder, so the worker runs as plain
 * JavaScript like the shipped dist/: under tsx the loader alone adds ~75 MB of RSS that production never pays.
 */
export async function compileDrainWorker(): Promise<CompiledWorker> {
  const outDir = await mkdtemp(join(tmpdir(), 'intake-bench-'));
  const remove = () => rm(outDir, { recursive: true, force: true });
  try {
    const tsc = join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    const args = [
      tsc,
      'bench/drain-worker.ts',
      'src/cli/main.ts',
      '--outDir',
      outDir,
      '--rootDir',
      '.',
      '--module',
      'nodenext',
      '--moduleResolution',
      'nodenext',
      '--target',
      'es2023',
      '--skipLibCheck',
      '--esModuleInterop',
      '--sourceMap',
      'false',
      '--types',
      'node',
    ];
    // type errors elsewhere in a tree under development do not stop tsc from emitting; a missing entry does
    // through the shared spawner: an interrupted bench kills the compiler too
    const compiler = spawnChild(process.execPath, args, { cwd: REPO_ROOT, env: definedOnly(process.env) });
    await compiler.exited;
    const output = compiler.stdout() + compiler.stderr();
    const entry = join(outDir, 'bench', 'drain-worker.js');
    const cliEntry = join(outDir, 'src', 'cli', 'main.js');
    for (const file of [entry, cliEntry]) {
      if (!existsSync(file)) throw new BenchProcessError(`tsc did not emit ${file}:\n${output.slice(0, 2000)}`);
    }
    await writeFile(join(outDir, 'package.json'), '{"type":"module"}\n');
    // bare imports resolve by walking up from the compiled file: give it the repo's node_modules; the
    // migrator reads drizzle/ and sql/api/ next to src/, as in the package
    await symlink(join(REPO_ROOT, 'node_modules'), join(outDir, 'node_modules'), 'dir');
    await symlink(join(REPO_ROOT, 'drizzle'), join(outDir, 'drizzle'), 'dir');
    await mkdir(join(outDir, 'sql'), { recursive: true });
    await symlink(join(REPO_ROOT, 'sql', 'api'), join(outDir, 'sql', 'api'), 'dir');
    return { entry, cliEntry, remove };
  } catch (error) {
    await remove();
    throw error;
  }
}
