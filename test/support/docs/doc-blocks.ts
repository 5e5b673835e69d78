/**
 * The executed docs (issue 27 §2): which shell blocks of a markdown file CI runs, in order. A block
 * runs when the line before its fence (blank lines between allowed) is a marker:
 *
 *   <!-- ci: run -->                 run it; it must exit 0 within its timeout (default 120 s)
 *   <!-- ci: run timeout=300 -->     the same, with its own timeout in seconds (1-600)
 *   <!-- ci: background -->          start it and leave it running (a daemon, the simulator)
 *   <!-- ci: stop -->                no block: stop every background step started so far, as Ctrl-C does
 *
 * Every other block is prose (an example, output, a production value) and is skipped. A marker that
 * is not followed by an `sh`/`bash`/`shell` fence, an unknown directive or option, is an error that
 * names the file and line: a typo must not silently skip a step. Markers inside a fence are text.
 * Pure: the text in, the steps out.
 */

export type DocStepKind = 'run' | 'background' | 'stop';

export interface DocStep {
  kind: DocStepKind;
  /** the file as given, for messages */
  file: string;
  /** 1-based line of the marker */
  line: number;
  /** the block's text (empty for stop) */
  script: string;
  /** seconds: how long a run step may take, or how long stop waits after Ctrl-C before killing */
  timeoutSeconds: number;
}

export class DocBlocksError extends Error {
  override readonly name = 'DocBlocksError';
}

const MARKER = /^\s*<!--\s*ci:\s*(.*?)\s*-->\s*$/;
const FENCE = /^(\s*)(`{3,}|~{3,})\s*([\w-]*)/;
const SHELLS = new Set(['sh', 'bash', 'shell']);
const DEFAULT_TIMEOUT: Record<DocStepKind, number> = { run: 120, background: 0, stop: 20 };

function parseMarker(body: string, file: string, line: number): { kind: DocStepKind; timeoutSeconds: number } {
  const [kind, ...options] = body.split(/\s+/);
  if (kind !== 'run' && kind !== 'background' && kind !== 'stop') {
    throw new DocBlocksError(`${file}:${line}: unknown ci directive "${kind}" (run, background, stop)`);
  }
  let timeoutSeconds = DEFAULT_TIMEOUT[kind];
  for (const option of options) {
    const timeout = /^timeout=(\d{1,3})$/.exec(option);
    const seconds = timeout ? Number(timeout[1]) : Number.NaN;
    if (kind === 'background' || !(seconds >= 1 && seconds <= 600)) {
      throw new DocBlocksError(`${file}:${line}: unknown option "${option}" of ci: ${kind} (timeout=SECONDS, 1-600, for run and stop)`);
    }
    timeoutSeconds = seconds;
  }
  return { kind, timeoutSeconds };
}

/** The steps of `markdown` (named `file` in messages), in document order. */
export function extractDocSteps(markdown: string, file: string): DocStep[] {
  const lines = markdown.split(/\r?\n/);
  const steps: DocStep[] = [];
  let pending: { kind: DocStepKind; timeoutSeconds: number; line: number } | null = null;
  for (let i = 0; i < lines.length; i += 1) {
    const text = lines[i] ?? '';
    const fence = FENCE.exec(text);
    if (fence) {
      const [, , marks = '', info = ''] = fence;
      const closing = new RegExp(`^\\s*${marks[0] === '`' ? '`' : '~'}{${marks.length},}\\s*$`);
      const body: string[] = [];
      let end = i + 1;
      while (end < lines.length && !closing.test(lines[end] ?? '')) body.push(lines[end++] ?? '');
      if (end >= lines.length) throw new DocBlocksError(`${file}:${i + 1}: a fence that is never closed`);
      if (pending) {
        if (!SHELLS.has(info)) {
          throw new DocBlocksError(`${file}:${pending.line}: ci: ${pending.kind} must be followed by a sh block (found \`\`\`${info})`);
        }
        steps.push({
          kind: pending.kind,
          file,
          line: pending.line,
          script: `${body.join('\n')}\n`,
          timeoutSeconds: pending.timeoutSeconds,
        });
        pending = null;
      }
      i = end;
      continue;
    }
    const marker = MARKER.exec(text);
    if (marker) {
      if (pending)
        throw new DocBlocksError(`${file}:${pending.line}: ci: ${pending.kind} must be followed by a sh block (found another marker)`);
      const parsed = parseMarker(marker[1] ?? '', file, i + 1);
      if (parsed.kind === 'stop') steps.push({ kind: 'stop', file, line: i + 1, script: '', timeoutSeconds: parsed.timeoutSeconds });
      else pending = { ...parsed, line: i + 1 };
      continue;
    }
    if (pending && text.trim() !== '') {
      throw new DocBlocksError(`${file}:${pending.line}: ci: ${pending.kind} must be followed by a sh block (found text)`);
    }
  }
  if (pending)
    throw new DocBlocksError(`${file}:${pending.line}: ci: ${pending.kind} must be followed by a sh block (found the end of the file)`);
  return steps;
}
