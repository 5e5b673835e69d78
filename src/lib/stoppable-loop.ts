/**
 * A background loop a leader runs beside its poller (outbox delivery, the retention cleaner): run()
 * starts it once and returns the same promise on every call; stop() sets `stopping`, aborts
 * `stopSignal` (so the loop's waits and requests end at once) and resolves when the loop has ended.
 * Idempotent both ways. The subclass's loop() checks `stopping` after every wait.
 */
export abstract class StoppableLoop {
  protected stopping = false;
  protected readonly stopSignal = new AbortController();
  private running: Promise<void> | undefined;

  run(): Promise<void> {
    this.running ??= this.loop();
    return this.running;
  }

  /** Idempotent; resolves once the loop has ended. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.stopSignal.abort();
    await this.running;
  }

  protected abstract loop(): Promise<void>;
}
