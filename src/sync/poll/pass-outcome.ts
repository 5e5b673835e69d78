import type { CursorProblemKind, ResetHint } from '../state/cursor-problem.js';
import type { FailureSource } from '../state/worker-snapshot.js';

/** How one pass of the poll loop ended; the loop decides its next wait from it. */
export type PassOutcome =
  | { kind: 'caught-up' }
  | { kind: 'no-progress' }
  | { kind: 'conflict' }
  | { kind: 'failure'; source: FailureSource; error: unknown }
  | { kind: 'fatal'; error: unknown }
  /** the stored position cannot (or may not) be read on: wait for resync or a reset to move it */
  | { kind: 'cursor'; problem: CursorProblemKind; version: number; at?: string | null; reset?: ResetHint | null }
  /** still stopped at the same checkpoint version */
  | { kind: 'held' }
  | { kind: 'stopped' };
