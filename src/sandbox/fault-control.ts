import { DEFAULT_FAULTS, mergeFaults, type FaultConfig } from './faults.js';
import { createPrng, type Random } from './prng.js';

// Transport and content faults draw from separate streams: how many requests a
// client happens to make must not change which events the feed duplicates.
const TRANSPORT_STREAM = 0x9e3779b9;

/** The live fault configuration and its seeded random streams, changeable at runtime. */
export class FaultControl {
  private current: FaultConfig;
  private transport: Random;
  private content: Random;

  constructor(initial: Partial<FaultConfig> = {}) {
    this.current = mergeFaults({ ...DEFAULT_FAULTS }, initial);
    this.transport = createPrng(this.current.seed ^ TRANSPORT_STREAM);
    this.content = createPrng(this.current.seed);
  }

  get config(): FaultConfig {
    return this.current;
  }

  get transportRandom(): Random {
    return this.transport;
  }

  get contentRandom(): Random {
    return this.content;
  }

  /** Applies a partial update (validated); a given `seed` restarts both random streams. */
  update(patch: unknown): FaultConfig {
    const next = mergeFaults(this.current, patch);
    if (typeof patch === 'object' && patch !== null && 'seed' in patch) {
      this.transport = createPrng(next.seed ^ TRANSPORT_STREAM);
      this.content = createPrng(next.seed);
    }
    this.current = next;
    return { ...next };
  }
}
