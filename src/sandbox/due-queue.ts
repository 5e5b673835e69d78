/** What the queue orders by: when the next step falls due, then creation order. */
export interface DueItem {
  readonly seq: number;
  nextDueAt: number;
}

function before(a: DueItem, b: DueItem): boolean {
  return a.nextDueAt < b.nextDueAt || (a.nextDueAt === b.nextDueAt && a.seq < b.seq);
}

/**
 * A binary min-heap of prescriptions by (next due time, creation order). Holding
 * the prescription (not each event) keeps a million scheduled events at one entry
 * per prescription with pending steps.
 */
export class DueQueue<T extends DueItem> {
  private readonly heap: T[] = [];

  get size(): number {
    return this.heap.length;
  }

  push(item: T): void {
    const heap = this.heap;
    heap.push(item);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(item, heap[parent] as T)) break;
      heap[i] = heap[parent] as T;
      i = parent;
    }
    heap[i] = item;
  }

  /** Removes and returns the earliest item when it is due at `nowMs`; undefined otherwise. */
  popDue(nowMs: number): T | undefined {
    const heap = this.heap;
    const top = heap[0];
    if (top === undefined || top.nextDueAt > nowMs) return undefined;
    const last = heap.pop() as T;
    if (heap.length > 0) this.siftDown(last);
    return top;
  }

  private siftDown(item: T): void {
    const heap = this.heap;
    const n = heap.length;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= n) break;
      const right = left + 1;
      const child = right < n && before(heap[right] as T, heap[left] as T) ? right : left;
      if (!before(heap[child] as T, item)) break;
      heap[i] = heap[child] as T;
      i = child;
    }
    heap[i] = item;
  }
}
