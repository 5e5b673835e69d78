/**
 * A background loop run once and stopped once (the poller, outbox delivery, the retention cleaner):
 * run() starts it once and returns the same promise on every call; stop() sets `stopping`, aborts
 * `stopSignal` (so the loop's waits and requests end at once) and resolves when the loop has ended,
 * however it ended (the caller of the entry point sees a failure). Idempotent both ways. The
 * subclass's loop() checks `stopping` after every wait.
 */
export abstract class StoppableLoop {
  protected stopping = false;
  protected readonly stopSignal = new AbortController();
  private running: Promise<unknown> | undefined;

  run(): Promise<void> {
    this.running ??= this.loop();
    return this.running as Promise<void>;
  }

  /** Idempotent; resolves once the loop has ended. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.stopSignal.abort();
    await this.running?.catch(() => {});
  }

  /**
   * Starts the loop through an entry point of its own (the poller's drain, which resolves with a
   * summary): a loop so started runs once, and a second start of any kind throws.
   */
  protected startOnce<T>(body: () => Promise<T>): Promise<T> {
    if (this.running) throw new Error(`a ${this.constructor.name} runs once; create a new one`);
    const promise = body();
    this.running = promise;
    return promise;
  }

  protected abstract loop(): Promise<void>;
}
