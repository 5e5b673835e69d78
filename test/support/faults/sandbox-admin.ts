import type { FaultConfig } from '../../../src/sandbox/faults.js';

/**
 * The sandbox simulator's admin surface (no auth, under /_sandbox), as the
 * scenarios drive it over HTTP. Field names follow the simulator's contract.
 */
/** The simulator's fault configuration, as its admin endpoint takes it. */
export type FaultSettings = FaultConfig;

/** Every per-request (transport) fault switched off; content faults are left alone. */
export const TRANSPORT_CALM: Partial<FaultSettings> = {
  errorRate: 0,
  rateLimitRate: 0,
  latencyMs: 0,
  latencyJitterMs: 0,
  dropRate: 0,
  dropAfterProcessingRate: 0,
  hangRate: 0,
  truncatedRate: 0,
  wrongShapeRate: 0,
};

export interface SeedRequest {
  key?: string;
  count: number;
  reject_every?: number;
  prefix?: string;
}

export type SandboxStats = Record<string, unknown>;

/** Thin typed client for POST/GET /_sandbox/*. */
export class SandboxAdmin {
  constructor(private readonly adminUrl: string) {}

  /** Merges the given fault settings into the simulator's current ones. */
  async setFaults(faults: Partial<FaultSettings>): Promise<void> {
    await this.call('POST', 'faults', faults);
  }

  /** Registers `count` prescriptions whose whole histories are already due. */
  async seed(request: SeedRequest): Promise<unknown> {
    return this.call('POST', 'seed', request);
  }

  /** Appends raw entries (any JSON values) to the feed of `key` (default: the started key). */
  async inject(events: unknown[], key?: string): Promise<void> {
    await this.call('POST', 'inject', key ? { key, events } : { events });
  }

  async advanceClock(advanceMs: number): Promise<void> {
    await this.call('POST', 'clock', { advance_ms: advanceMs });
  }

  async revokeKey(key: string): Promise<void> {
    await this.call('POST', 'credentials', { revoke: key });
  }

  async addCredential(key: string, secret: string): Promise<void> {
    await this.call('POST', 'credentials', { add: { key, secret } });
  }

  /** What POST / DELETE /prescriptions did per external_id starting with `prefix`. */
  async prescriptionRequests(
    prefix: string,
  ): Promise<Record<string, { created: number; duplicates_refused: number; cancellations: number }>> {
    const body = (await this.call('GET', `prescription-requests?prefix=${encodeURIComponent(prefix)}`)) as {
      external_ids: Record<string, { created: number; duplicates_refused: number; cancellations: number }>;
    };
    return body.external_ids;
  }

  async stats(): Promise<SandboxStats> {
    return (await this.call('GET', 'stats')) as SandboxStats;
  }

  private async call(method: 'GET' | 'POST', path: string, body?: unknown): Promise<unknown> {
    const response = await fetch(`${this.adminUrl}/${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`sandbox admin ${method} /_sandbox/${path} answered ${response.status}: ${text.slice(0, 500)}`);
    return text ? (JSON.parse(text) as unknown) : undefined;
  }
}
