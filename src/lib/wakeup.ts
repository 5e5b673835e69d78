/**
 * A latch a waiter sleeps on until woken, a timeout passes or a signal aborts. A wake() while
 * nobody waits is kept for the next wait(): a notification that arrives during a read must not
 * be lost, or the follower would sleep a whole poll interval with a change waiting.
 */
export class Wakeup {
  private pending = false;
  private release: (() => void) | undefined;

  wake(): void {
    this.pending = true;
    this.release?.();
  }

  /** Forgets a pending wake (called just before reading: the read sees everything committed so far). */
  clear(): void {
    this.pending = false;
  }

  /** Resolves on wake(), after `ms`, or at once when the signal aborts (it never rejects). */
  async wait(ms: number, signal?: AbortSignal): Promise<void> {
    if (!this.pending && !signal?.aborted) {
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', done);
          this.release = undefined;
          resolve();
        };
        const timer = setTimeout(done, ms);
        signal?.addEventListener('abort', done, { once: true });
        this.release = done;
      });
    }
    this.pending = false;
  }
}
