import type { Reporter, TestCase, TestModule, TestSpecification } from 'vitest/node';
import { runComment, runDirectory, testRunId } from './test-run.js';

/** How often a line says the run is alive, whatever the default reporter has shown. */
const EVERY_MS = 10_000;

/**
 * `npm test`'s progress: at once, what the run is and what it creates where (its run id); then
 * every 10 s how many files and tests are done, so a long first file never looks like a hang.
 */
export default class ProgressReporter implements Reporter {
  private files = 0;
  private filesDone = 0;
  private passed = 0;
  private failed = 0;
  private started = Date.now();
  private timer: NodeJS.Timeout | undefined;

  onTestRunStart(specifications: ReadonlyArray<TestSpecification>): void {
    this.files = specifications.length;
    this.started = Date.now();
    const id = testRunId();
    const creates = id
      ? `; creates databases t_${id}_* and roles commented '${runComment(id)}' on TEST_DATABASE_URL's server, scratch files in ${runDirectory(id)}; all removed at the end, Ctrl-C included`
      : '';
    process.stderr.write(`progress: ${this.files} test files${id ? `, run ${id}` : ''}${creates}\n`);
    this.timer = setInterval(() => this.line(), EVERY_MS);
    this.timer.unref();
  }

  onTestCaseResult(testCase: TestCase): void {
    const state = testCase.result().state;
    if (state === 'passed') this.passed += 1;
    else if (state === 'failed') this.failed += 1;
  }

  onTestModuleEnd(_module: TestModule): void {
    this.filesDone += 1;
  }

  onTestRunEnd(): void {
    if (this.timer) clearInterval(this.timer);
  }

  private line(): void {
    const seconds = Math.round((Date.now() - this.started) / 1000);
    process.stderr.write(
      `progress: ${seconds} s, ${this.filesDone}/${this.files} files done, ${this.passed} tests passed, ${this.failed} failed\n`,
    );
  }
}
