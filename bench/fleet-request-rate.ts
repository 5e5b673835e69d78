// Requests per second to the operator, as the operator's side sees them: request start times
// recorded by a counting proxy, then the worst 1-second window against the mean.

// the first bytes of an HTTP/1.1 request line; a JSON body chunk never starts with one
const REQUEST_LINE = /^(GET|POST|PUT|PATCH|DELETE|HEAD) \//;

/**
 * A per-connection observer for startDelayProxy: pushes the time (performance.now()) of every
 * request's first chunk onto `times`. Keep-alive connections carry one request at a time, so a chunk
 * starting with a request line is one request.
 */
export function requestStartObserver(times: number[]): () => (chunk: Buffer) => void {
  return () => (chunk) => {
    if (REQUEST_LINE.test(chunk.subarray(0, 8).toString('latin1'))) times.push(performance.now());
  };
}

/** The request rate over a window, with its worst second. */
export interface RequestRate {
  requests: number;
  seconds: number;
  /** requests over the window's seconds */
  mean_per_s: number;
  /** most requests in any 1-second window [t, t + 1000 ms) inside the measured window, t anywhere */
  worst_sliding_1s: number;
  /** most requests in one of the window's whole seconds counted from its start */
  worst_fixed_1s: number;
}

/** Pure: the rate of the request times (ms) within [fromMs, toMs). */
export function requestRate(times: readonly number[], fromMs: number, toMs: number): RequestRate {
  const inside = times.filter((t) => t >= fromMs && t < toMs).sort((a, b) => a - b);
  const seconds = (toMs - fromMs) / 1000;
  let worstSliding = 0;
  // a window starting at a request holds the most of any window ending before the next one starts
  for (let start = 0, end = 0; start < inside.length; start++) {
    while (end < inside.length && (inside[end] as number) < (inside[start] as number) + 1000) end++;
    worstSliding = Math.max(worstSliding, end - start);
  }
  const bins = new Map<number, number>();
  for (const t of inside) {
    const bin = Math.floor((t - fromMs) / 1000);
    bins.set(bin, (bins.get(bin) ?? 0) + 1);
  }
  return {
    requests: inside.length,
    seconds,
    mean_per_s: seconds > 0 ? inside.length / seconds : Number.NaN,
    worst_sliding_1s: worstSliding,
    worst_fixed_1s: Math.max(0, ...bins.values()),
  };
}
